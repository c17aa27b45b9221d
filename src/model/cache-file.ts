// The caches under the user's cache directory (cache-dir.ts: the list catalogue, validated scenarios): keyed by
// the validating code's print, read as JSON, written atomically (a temporary file renamed into place,
// so concurrent runs never read half a file), and both best effort: a read-only install simply works
// without them.
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VERSION } from './version.ts';

let print: Promise<string> | undefined;

/**
 * What a cached scenario or listing depends on besides the file: the netrepro version and the content of
 * every module under src/model (the schema, its step and probe kinds, the reference checks; .ts from
 * source, .js compiled). Read once per process.
 */
export function modelCodePrint(): Promise<string> {
  return (print ??= (async () => {
    const root = dirname(fileURLToPath(import.meta.url));
    const files = (await readdir(root, { recursive: true })).filter((f) => /\.(ts|js)$/.test(f)).sort();
    const contents = await Promise.all(files.map((f) => readFile(join(root, f))));
    const hash = createHash('sha256').update(VERSION);
    for (const [i, f] of files.entries()) hash.update(f).update(contents[i]!);
    return hash.digest('hex');
  })());
}

export async function readCache<T>(file: string): Promise<T | undefined> {
  return (await readFile(file, 'utf8').then(JSON.parse, () => undefined)) as T | undefined;
}

export async function writeCache(file: string, data: object): Promise<void> {
  const partial = `${file}.${process.pid}.tmp`;
  try {
    await mkdir(dirname(file), { recursive: true });
    await writeFile(partial, JSON.stringify(data));
    await rename(partial, file);
  } catch {
    await rm(partial, { force: true }).catch(() => {}); // no half-written file left behind
  }
}
