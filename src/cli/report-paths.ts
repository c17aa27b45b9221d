// Report paths are tried before any lab starts, so a mistyped or unwritable one costs nothing: each
// file is opened for writing where it will be written (created and removed again when it did not
// exist), each directory made and a file created in it. What only the write itself can show (a disk
// that fills during the run) is left to writeReport.
import { open, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { HarnessError } from '../model/errors.ts';
import { makeDirectories } from '../model/make-directories.ts';
import { reportWriteError } from '../report/report-write-error.ts';
import { STDOUT } from '../report/write-report.ts';

export interface ReportPath {
  /** The option that named it, e.g. `--json`. */
  flag: string;
  /** What is written there, e.g. `JSON report`. */
  what: string;
  path: string | undefined;
  /** A directory of evidence files rather than one file. */
  directory?: boolean;
}

/** Throws USAGE (exit 2) for the first path that cannot be written; returns whether a report goes to stdout. */
export async function checkReportPaths(paths: readonly ReportPath[]): Promise<{ stdoutTaken: boolean }> {
  const given = paths.filter((p): p is ReportPath & { path: string } => p.path !== undefined);
  const toStdout = given.filter((p) => p.path === STDOUT);
  const dirToStdout = toStdout.find((p) => p.directory);
  if (dirToStdout)
    throw new HarnessError(
      'USAGE',
      `${dirToStdout.flag} cannot be - (stdout): it holds many files`,
      `name a directory, e.g. ${dirToStdout.flag} reports/`,
    );
  if (toStdout.length > 1)
    throw new HarnessError(
      'USAGE',
      `only one report can go to stdout (-); ${toStdout.map((p) => p.flag).join(' and ')} both ask for it`,
      'write the others to files',
    );
  for (const p of given) {
    if (p.path === STDOUT) continue;
    try {
      await (p.directory ? tryDirectory(p.path) : tryFile(p.path));
    } catch (e) {
      throw reportWriteError('USAGE', `${p.what} (${p.flag})`, p.path, e);
    }
  }
  return { stdoutTaken: toStdout.length > 0 };
}

async function tryFile(file: string): Promise<void> {
  const existing = await stat(file).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return undefined;
    throw e;
  });
  if (existing?.isDirectory())
    throw Object.assign(new Error(`EISDIR: is a directory, open '${file}'`), {
      code: 'EISDIR',
      syscall: 'open',
      path: file,
    });
  if (existing) {
    // read-write without truncating: the file keeps its content until the report replaces it
    await (await open(file, 'r+')).close();
    return;
  }
  await makeDirectories(dirname(file));
  await (await open(file, 'wx')).close();
  await unlink(file);
}

async function tryDirectory(dir: string): Promise<void> {
  await makeDirectories(dir);
  const probe = join(dir, `.netrepro-write-check-${process.pid}`);
  await (await open(probe, 'wx')).close();
  await unlink(probe);
}
