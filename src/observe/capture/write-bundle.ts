// Writes a bundle: a directory, or the same directory as a .tar.gz made by the system's tar (GNU tar is on every
// machine capture runs on, node and admin host alike; a JS tar library would be a new dependency for one call).
// The redaction mapping, when there is one, goes beside the bundle, never inside.
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { runCommand } from '../../contract/command.ts';
import { HarnessError } from '../../model/errors.ts';
import { makeDirectories } from '../../model/make-directories.ts';

export const isTarball = (out: string) => /\.tar\.gz$|\.tgz$/.test(out);

/** `netrepro-capture-NODE-20261128T173000Z` (NODE: the node, or the run for several nodes). */
export function defaultBundleName(what: string, at: Date): string {
  const stamp = at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `netrepro-capture-${what}-${stamp}`;
}

/** Where the redaction mapping goes: beside the bundle, `<bundle>.redaction.json`. */
export function mappingPath(out: string): string {
  return `${out.replace(/\.tar\.gz$|\.tgz$/, '').replace(/\/+$/, '')}.redaction.json`;
}

/** Writes `files` (path inside the bundle -> text) to `out`; returns each file's size in bytes, and the tarball's. */
export async function writeBundle(
  out: string,
  files: ReadonlyMap<string, string>,
): Promise<{ sizes: Map<string, number>; tarballBytes?: number }> {
  const sizes = new Map([...files].map(([p, t]) => [p, Buffer.byteLength(t)]));
  if (!isTarball(out)) {
    await refuseNonEmpty(out);
    await writeTree(out, files);
    return { sizes };
  }
  if (await exists(out)) throw new HarnessError('USAGE', `${out} exists`, 'name a new file, or remove it first');
  const dir = await mkdtemp(join(tmpdir(), 'netrepro-capture-'));
  try {
    const name = basename(out).replace(/\.tar\.gz$|\.tgz$/, '');
    await writeTree(join(dir, name), files);
    await makeDirectories(dirname(resolve(out)));
    await runCommand(['tar', '-czf', resolve(out), '-C', dir, name]);
    return { sizes, tarballBytes: (await stat(out)).size };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function writeTree(root: string, files: ReadonlyMap<string, string>): Promise<void> {
  for (const [path, text] of files) {
    const file = join(root, path);
    await makeDirectories(dirname(file));
    await writeFile(file, text, { flag: 'wx' });
  }
}

const exists = (p: string) =>
  stat(p).then(
    () => true,
    () => false,
  );

async function refuseNonEmpty(dir: string): Promise<void> {
  const entries = await readdir(dir).catch(() => undefined);
  if (entries && entries.length > 0)
    throw new HarnessError('USAGE', `${dir} is not empty`, 'name a new or empty directory with --out');
}
