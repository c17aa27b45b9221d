// `mkdir -p` that always ends. Node's own recursive mkdir steps back to the parent on ENOENT and
// forward again on EEXIST, so a directory that exists but cannot hold a new child (anything under
// /proc, a dangling symlink) makes it spin forever at full CPU; here a second ENOENT is final.
import { mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Creates `dir` and its missing parents; rejects with the errno of the first directory that cannot be made. */
export async function makeDirectories(dir: string): Promise<void> {
  try {
    await makeOne(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(dir) === dir) throw e;
    await makeDirectories(dirname(dir));
    await makeOne(dir);
  }
}

async function makeOne(dir: string): Promise<void> {
  try {
    await mkdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    // a dangling symlink rejects here with ENOENT, which is final
    if (!(await stat(dir)).isDirectory())
      throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${dir}'`), {
        code: 'ENOTDIR',
        syscall: 'mkdir',
        path: dir,
      });
  }
}
