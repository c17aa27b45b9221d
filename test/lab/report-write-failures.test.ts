// Reports that fail in ways only root can stage without touching the host: EACCES as another user,
// EROFS and ENOSPC on a small tmpfs in a private mount namespace (gone with the namespace), and a
// signal while a report write is stuck (a FIFO nobody reads). Nothing is timed: the machine is shared.
// No lab runs inside a private mount namespace: its `ip netns` entries would outlive the run there.
import { spawn } from 'node:child_process';
import { chmod, mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PACKAGE_ROOT } from '../../src/model/package-root.ts';
import { runProcess } from '../child-process.ts';
import { labSkipReason, tempDir } from '../lab-support.ts';

const CLI = [join(PACKAGE_ROOT, 'bin/netrepro.js'), 'run', 'service-no-endpoints-reject'];
/** Runs `script` in a private mount namespace: its mounts vanish with it, the host never sees them. Only for runs refused before any lab. */
const inMountNamespace = (script: string) =>
  runProcess('unshare', ['--mount', '--propagation', 'private', 'sh', '-ec', script], { cwd: PACKAGE_ROOT });

describe.skipIf(labSkipReason)('reports that cannot be written', () => {
  it('EACCES: a directory this user cannot write is refused before the run (exit 2)', async () => {
    const dir = await tempDir();
    await chmod(dir, 0o755); // others may look in, not write
    const r = await runProcess(
      'setpriv',
      ['--reuid=65534', '--regid=65534', '--clear-groups', 'node', ...CLI, '--json', join(dir, 'sub/r.json')],
      { cwd: '/' },
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      `cannot write the JSON report (--json) to ${dir}/sub/r.json: permission denied (EACCES, mkdir ${dir}/sub)`,
    );
    expect(r.stderr).toContain('hint: choose a directory this user can write');
  });

  it('EROFS: a read-only file system is refused before the run (exit 2)', async () => {
    const dir = await tempDir();
    const r = await inMountNamespace(
      `mount -t tmpfs -o ro,size=64k netrepro-test ${dir}; exec node ${CLI.join(' ')} --junit ${dir}/r.xml`,
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      `cannot write the JUnit report (--junit) to ${dir}/r.xml: read-only file system (EROFS, open ${dir}/r.xml)`,
    );
  });

  it('ENOSPC: a disk that fills fails at the end (exit 3) with the summary and every other report written', async () => {
    const dir = await tempDir();
    const full = join(dir, 'full');
    await mkdir(full);
    // the full tmpfs lives in a sleeper's private mount namespace; the run reaches it through
    // /proc/PID/root, so the lab itself runs in the host's mount namespace as always
    const sleeper = spawn(
      'unshare',
      [
        '--mount',
        '--propagation',
        'private',
        'sh',
        '-ec',
        `mount -t tmpfs -o size=64k netrepro-test ${full}; head -c 1M /dev/zero > ${full}/filler || true; echo ready; exec sleep 600`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    onTestFinished(() => void sleeper.kill('SIGKILL'));
    await new Promise((resolve) => sleeper.stdout.once('data', resolve));
    const onFullDisk = `/proc/${sleeper.pid}/root${full}`;
    const r = await runProcess(
      'node',
      [...CLI, '--json', `${onFullDisk}/r.json`, '--junit', join(dir, 'r.xml'), '--markdown', join(dir, 'r.md')],
      { cwd: PACKAGE_ROOT },
    );
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toContain('1 passed, 0 failed');
    expect(r.stderr).toContain(
      `netrepro: cannot write the JSON report to ${onFullDisk}/r.json: no space left on device (ENOSPC`,
    );
    expect(r.stderr).toContain('hint: free space on that file system, or write the report to another one');
    expect(await readFile(join(dir, 'r.xml'), 'utf8')).toContain('<testsuites');
    expect(await readFile(join(dir, 'r.md'), 'utf8')).toContain('service-no-endpoints-reject');
    // no cut-off report is left on the full disk
    expect(await readdir(onFullDisk)).toEqual(['filler']);
  });

  it.each([
    ['one SIGTERM', ['SIGTERM'], 'SIGTERM'],
    ['SIGINT twice', ['SIGINT', 'SIGINT'], 'SIGINT'],
  ] as const)(
    'a report write that never ends: %s ends the process, killed by that signal',
    async (_, signals, endedBy) => {
      const dir = await tempDir();
      const fifo = join(dir, 'nobody-reads');
      await runProcess('mkfifo', [fifo]);
      const child = spawn('node', [...CLI, '--json', fifo], { cwd: PACKAGE_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      const ended = new Promise<NodeJS.Signals | null>((resolve) =>
        child.once('close', (_code, signal) => resolve(signal)),
      );
      // the summary comes first; the JSON report's open() then waits for a reader that never comes
      await new Promise<void>((resolve) =>
        child.stdout.on('data', (b: Buffer) => {
          stdout += b.toString();
          if (stdout.includes('1 passed')) resolve();
        }),
      );
      for (const signal of signals) child.kill(signal);
      expect(await ended).toBe(endedBy);
      expect(stderr).toContain(
        `${signals[0]}: the labs are down; exiting ${endedBy === 'SIGINT' ? 130 : 143} once the reports are written`,
      );
      expect((await stat(fifo)).isFIFO()).toBe(true);
    },
  );
});
