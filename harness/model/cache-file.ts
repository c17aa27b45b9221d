// The caches under node_modules/.cache/netrepro (the list catalogue, validated scenarios): read as
// JSON, written atomically (a temporary file renamed into place, so concurrent runs never read half a
// file), and both best effort: a read-only install simply works without them.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

export async function readCache<T>(file: string): Promise<T | undefined> {
  return (await readFile(file, 'utf8').then(JSON.parse, () => undefined)) as T | undefined;
}

export async function writeCache(file: string, data: object): Promise<void> {
  const partial = `${file}.${process.pid}.tmp`;
  try {
    await mkdir(dirname(file), { recursive: true });
    await writeFile(partial, JSON.stringify(data));
    await rename(partial, file);
  } catch {}
}
