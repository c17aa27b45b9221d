// Every report file goes through here: `-` is stdout, any other path gets its missing directories
// (with a mkdir that always ends) and the text; a failure removes what was cut off and names the
// report, the path and the errno.
import { appendFile, lstat, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { makeDirectories } from '../model/make-directories.ts';
import { reportWriteError } from './report-write-error.ts';

/** The path that means standard output for every report flag. */
export const STDOUT = '-';

/** Errnos of a write that started: the file holds part of the report, which would read as a broken one. */
const CUT_OFF = new Set(['ENOSPC', 'EDQUOT', 'EFBIG', 'EIO']);

export async function writeReport(
  what: string,
  file: string,
  text: string,
  options: { append?: boolean } = {},
): Promise<void> {
  if (file === STDOUT) {
    await new Promise<void>((done) => process.stdout.write(text, () => done()));
    return;
  }
  try {
    await makeDirectories(dirname(file));
    await (options.append ? appendFile : writeFile)(file, text);
  } catch (e) {
    if (!options.append && CUT_OFF.has((e as NodeJS.ErrnoException).code ?? '')) await removeRegularFile(file);
    throw reportWriteError('ENVIRONMENT', what, file, e);
  }
}

/** Only a regular file: a report written to a device (/dev/full) or a FIFO must leave it be. */
async function removeRegularFile(file: string): Promise<void> {
  const stats = await lstat(file).catch(() => undefined);
  if (stats?.isFile()) await unlink(file).catch(() => {});
}
