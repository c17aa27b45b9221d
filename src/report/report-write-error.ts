// A report that cannot be written, said the same way whether the path is refused before the run
// (USAGE, exit 2) or the write fails after it (ENVIRONMENT, exit 3): which report, its path, the errno
// in words with the call and path that failed, and what to do.
import { HarnessError } from '../model/errors.ts';

const ERRNOS: Record<string, { words: string; remedy: string }> = {
  ENOENT: {
    words: 'no such file or directory',
    remedy:
      'a directory on the way is missing and cannot be made there (a dangling symlink, or a file system such as /proc or /sys); choose a path on a writable file system',
  },
  EACCES: { words: 'permission denied', remedy: 'choose a directory this user can write, or give it write permission' },
  EPERM: { words: 'operation not permitted', remedy: 'choose a directory this user can write' },
  EROFS: {
    words: 'read-only file system',
    remedy: 'the file system is mounted read-only; choose a path on a writable one',
  },
  ENOSPC: {
    words: 'no space left on device',
    remedy: 'free space on that file system, or write the report to another one',
  },
  EDQUOT: { words: 'disk quota exceeded', remedy: 'free space within the quota, or write the report elsewhere' },
  EISDIR: { words: 'is a directory', remedy: 'name a file, e.g. DIR/report.json' },
  ENOTDIR: { words: 'not a directory', remedy: 'a part of the path is a file, not a directory; choose another path' },
  ENAMETOOLONG: { words: 'file name too long', remedy: 'choose a shorter path' },
  EEXIST: {
    words: 'file exists',
    remedy: 'something that is not a regular file is in the way (a dangling symlink?); choose another path',
  },
};

export function reportWriteError(
  code: 'USAGE' | 'ENVIRONMENT',
  what: string,
  path: string,
  cause: unknown,
): HarnessError {
  const e = cause as NodeJS.ErrnoException;
  const known = e.code ? ERRNOS[e.code] : undefined;
  const call = e.syscall && e.path ? `, ${e.syscall} ${e.path}` : '';
  const why = e.code ? `${known?.words ?? e.message} (${e.code}${call})` : String(e.message ?? e);
  const remedy = known?.remedy ?? 'choose a path on a writable file system';
  const when = code === 'USAGE' ? 'nothing was run' : 'the verdicts are in the summary; the other reports were written';
  return new HarnessError(code, `cannot write the ${what} to ${path}: ${why}`, `${remedy} (${when})`, { cause });
}
