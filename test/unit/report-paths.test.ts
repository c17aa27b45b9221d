// Report paths: a report that cannot be written is refused before anything runs (exit 2, the path,
// the errno in words, what to do), `-` is stdout, and making a report's directories always ends.
// The errnos that need root to stage (EACCES as another user, EROFS, ENOSPC) and signals during a
// stuck write are in test/lab/report-write-failures.test.ts.
import { readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkReportPaths } from '../../src/cli/report-paths.ts';
import { makeDirectories } from '../../src/model/make-directories.ts';
import { PACKAGE_ROOT } from '../../src/model/package-root.ts';
import { runProcess } from '../child-process.ts';
import { cliInProcess } from '../cli-in-process.ts';
import { tempDir } from '../lab-support.ts';

describe('makeDirectories', () => {
  it('ends with ENOENT where a directory exists but cannot hold a new one (Node’s recursive mkdir spins there)', async () => {
    await expect(makeDirectories('/proc/netrepro-nope/deeper')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('ends with ENOENT under a dangling symlink, ENOTDIR under a file, and makes what is missing otherwise', async () => {
    const dir = await tempDir();
    await symlink(join(dir, 'gone'), join(dir, 'dangling'));
    await writeFile(join(dir, 'file'), '');
    await expect(makeDirectories(join(dir, 'dangling/a'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(makeDirectories(join(dir, 'file/a'))).rejects.toMatchObject({ code: 'ENOTDIR' });
    await makeDirectories(join(dir, 'a/b/c'));
    await makeDirectories(join(dir, 'a/b/c'));
    expect(await readdir(join(dir, 'a/b'))).toEqual(['c']);
  });
});

describe('checkReportPaths', () => {
  it('leaves nothing behind where the report will go, and keeps an existing file as it is', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'old.json'), 'kept');
    await checkReportPaths([
      { flag: '--json', what: 'JSON report', path: join(dir, 'new/r.json') },
      { flag: '--junit', what: 'JUnit report', path: join(dir, 'old.json') },
      { flag: '--report-dir', what: 'evidence', path: join(dir, 'evidence'), directory: true },
    ]);
    expect((await readdir(dir)).sort()).toEqual(['evidence', 'new', 'old.json']);
    expect(await readdir(join(dir, 'new'))).toEqual([]);
    expect(await readdir(join(dir, 'evidence'))).toEqual([]);
  });

  it('takes - as stdout once, and never for a directory', async () => {
    expect(await checkReportPaths([{ flag: '--json', what: 'JSON report', path: '-' }])).toEqual({ stdoutTaken: true });
    expect(await checkReportPaths([{ flag: '--json', what: 'JSON report', path: undefined }])).toEqual({
      stdoutTaken: false,
    });
    await expect(
      checkReportPaths([
        { flag: '--json', what: 'JSON report', path: '-' },
        { flag: '--junit', what: 'JUnit report', path: '-' },
      ]),
    ).rejects.toThrow('only one report can go to stdout (-); --json and --junit both ask for it');
    await expect(
      checkReportPaths([{ flag: '--report-dir', what: 'evidence', path: '-', directory: true }]),
    ).rejects.toThrow('--report-dir cannot be - (stdout)');
  });
});

describe('run refuses a report path before anything runs (exit 2)', () => {
  // the command line in this process: every report flag of `run` reaches the check before anything runs
  it.each([
    [
      'a directory under /proc',
      ['--json', '/proc/netrepro-nope/r.json'],
      'cannot write the JSON report (--json) to /proc/netrepro-nope/r.json: no such file or directory (ENOENT, mkdir /proc/netrepro-nope)',
    ],
    [
      'a directory',
      ['--junit', '/tmp'],
      'cannot write the JUnit report (--junit) to /tmp: is a directory (EISDIR, open /tmp)',
    ],
    [
      'a path through a file',
      ['--markdown', `${PACKAGE_ROOT}/package.json/r.md`],
      `cannot write the Markdown summary (--markdown) to ${PACKAGE_ROOT}/package.json/r.md: not a directory (ENOTDIR`,
    ],
    [
      'a report dir under /proc',
      ['--report-dir', '/proc/netrepro-nope'],
      'cannot write the evidence (--report-dir) to /proc/netrepro-nope: no such file or directory (ENOENT, mkdir /proc/netrepro-nope)',
    ],
  ])('%s', async (_, flags, message) => {
    const r = await cliInProcess(['run', 'service-no-endpoints-reject', ...flags]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`netrepro: ${message}`);
    expect(r.stderr).toMatch(/hint: .+ \(nothing was run\)/);
    expect(r.stdout).toBe('');
  });

  it('names the directory to use when a dangling symlink is in the way', async () => {
    const dir = await tempDir();
    await symlink(join(dir, 'unmounted'), join(dir, 'reports'));
    const r = await cliInProcess(['run', 'service-no-endpoints-reject', '--html', join(dir, 'reports/r.html')]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      `cannot write the HTML report (--html) to ${dir}/reports/r.html: no such file or directory (ENOENT`,
    );
    expect(r.stderr).toContain('a dangling symlink');
  });

  it('as a process: exit status 2, the message on stderr, nothing on stdout', async () => {
    const r = await runProcess('node', ['bin/netrepro.js', 'run', 'service-no-endpoints-reject', '--junit', '/tmp'], {
      cwd: PACKAGE_ROOT,
    });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('netrepro: cannot write the JUnit report (--junit) to /tmp: is a directory');
    expect(r.stderr).toMatch(/hint: .+ \(nothing was run\)/);
    expect(r.stdout).toBe('');
  });
});
