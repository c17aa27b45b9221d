// Compile once per source version, cached in the user's cache directory (model/cache-dir.ts), never in
// the install folder, which may be read-only. Labs in one process share one compilation (a promise per output), and processes compiling at
// the same time each write their own temporary file and rename it into place (atomic).
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';

const building = new Map<string, Promise<string>>();

/**
 * The cached output for `source`: `<cacheDir><name>-<hash><ext>` (cacheDir absolute, ending in /), written by `compile(output)` when it is
 * not there yet.
 */
export function cachedBuild(
  cacheDir: string,
  name: string,
  source: string,
  ext: string,
  compile: (output: string) => Promise<unknown>,
): Promise<string> {
  const key = `${cacheDir}${name}`;
  let pending = building.get(key);
  if (!pending) {
    pending = build(cacheDir, name, source, ext, compile);
    building.set(key, pending);
    // a failed build is not remembered: the next call tries again
    pending.catch(() => building.delete(key));
  }
  return pending;
}

async function build(
  cache: string,
  name: string,
  source: string,
  ext: string,
  compile: (output: string) => Promise<unknown>,
): Promise<string> {
  // the source and every local header it includes (`#include "x.h"`): a changed header is a new version
  const text = await readFile(source, 'utf8');
  const headers = [...text.matchAll(/^#include "([^"]+)"/gm)].map((m) => join(dirname(source), m[1]!));
  const hash = createHash('sha256').update(text);
  for (const h of headers) hash.update(await readFile(h));
  const version = hash.digest('hex').slice(0, 12);
  const output = `${cache}${name}-${version}${ext}`;
  if (
    await stat(output).then(
      () => true,
      () => false,
    )
  )
    return output;
  await mkdir(cache, { recursive: true });
  const partial = `${output}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  try {
    await compile(partial);
    await rename(partial, output);
  } finally {
    await rm(partial, { force: true });
  }
  return output;
}
