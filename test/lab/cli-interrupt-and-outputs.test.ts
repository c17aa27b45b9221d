// The CLI as a person or a pipeline meets it on a real lab: Ctrl-C ends a run with one line naming
// what it tore down (never a stack), `clean` names the live runs it leaves, a pseudo-terminal of 0
// columns gets plain lines, `--json -` keeps stdout to the report, `explain` leaves no temporary directory.
import { spawn } from 'node:child_process';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { liveRuns } from '../../src/providers/netns/clean-leftovers.ts';
import { PACKAGE_ROOT } from '../../src/model/package-root.ts';
import { NETNS_DIR, STATE_ROOT } from '../../src/providers/namespaces/lab-names.ts';
import { CGROUP_ROOT } from '../../src/providers/netns/run-cgroups.ts';
import { runProcess } from '../child-process.ts';
import { labSkipReason, tempDir } from '../lab-support.ts';

const CLI = join(PACKAGE_ROOT, 'bin/netrepro.js');
const INTERRUPTED =
  /^SIGINT: (tore down the labs of [\w-]+ \((fix "[\w-]+"(, "[\w-]+")*|while being built)\)(; [\w-]+ \(.+\))*|no lab was up when it came); \d+ of \d+ scenario\(s\) finished before it, \d+ not started; exiting 130$/;

/** The run id whose owner is `pid`, from the state directory each run writes first. */
async function runIdOf(pid: number): Promise<string | undefined> {
  for (const id of await readdir(STATE_ROOT).catch(() => [] as string[])) {
    const owner = await readFile(join(STATE_ROOT, id, 'owner.json'), 'utf8').catch(() => '{}');
    // another run may be writing its owner file this moment (runs of other tests share the state root)
    let ownerPid: number | undefined;
    try {
      ownerPid = (JSON.parse(owner) as { pid?: number }).pid;
    } catch {}
    if (ownerPid === pid) return id;
  }
  return undefined;
}

/** What the run left: its namespaces, state directory and cgroup, by its run id. */
async function leftoversOf(id: string | undefined): Promise<string[]> {
  if (!id) return [];
  const namespaces = (await readdir(NETNS_DIR).catch(() => [] as string[])).filter((n) => n.startsWith(`nr-${id}-`));
  const dirs = [join(STATE_ROOT, id), join(CGROUP_ROOT, id)];
  const present = await Promise.all(
    dirs.map((d) =>
      stat(d).then(
        () => [d],
        () => [],
      ),
    ),
  );
  return [...namespaces, ...present.flat()];
}

/** netrepro in its own process group, Ctrl-C'd (SIGINT to the whole group, as a terminal does) once stderr shows `when`. */
async function interruptedRun(
  args: string[],
  when: RegExp,
): Promise<{ code: number | null; stderr: string; runId?: string; leftovers: string[] }> {
  const child = spawn('node', [CLI, ...args], {
    cwd: PACKAGE_ROOT,
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  let sent = false;
  let closed = false;
  // the run id from the owner file the run writes as it starts, looked up until found (before the teardown
  // that Ctrl-C starts can remove it)
  const id = (async () => {
    for (;;) {
      const found = await runIdOf(child.pid!);
      if (found || closed) return found;
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  child.stderr.on('data', (b: Buffer) => {
    stderr += b.toString();
    if (!sent && when.test(stderr)) {
      sent = true;
      process.kill(-child.pid!, 'SIGINT');
    }
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  closed = true;
  const runId = await id;
  return { code, stderr, runId, leftovers: await leftoversOf(runId) };
}

describe.skipIf(labSkipReason)('the CLI on a lab', () => {
  it('Ctrl-C as the run starts: exit 130 and one line saying what was torn down, no stack', async () => {
    const { code, stderr } = await interruptedRun(['run', '--all'], /scenario\(s\) on netns/);
    expect(code).toBe(130);
    expect(stderr.trimEnd().split('\n').at(-1)).toMatch(INTERRUPTED);
    expect(stderr).not.toMatch(/Error:|\n\s+at /);
  });

  // a scenario with a background injector, a tc shaper and two labs: Ctrl-C at each kind of moment, including
  // while the injector and the probe it races run, ends the same way and leaves nothing of the run (the five
  // runs side by side, each its own process and run id)
  it.concurrent.each([
    ['with a lab up', /lab up for fix "be-liberal"/],
    ['during a foreground step', /\$ node\/node-a: tc qdisc add/],
    ['while the background injector runs', /\[conntrack-invalid-reset-cross-node\] faulted/],
    ['between the probes and the checks', /✓ download: client -> 10\.96\.0\.30:80 = reset/],
    ['in the second fix variant', /lab up for fix "be-liberal-server-node-only"/],
  ])('Ctrl-C %s: exit 130, "interrupted" without an error, nothing left', async (_, when) => {
    const { code, stderr, runId, leftovers } = await interruptedRun(
      ['run', 'conntrack-invalid-reset-cross-node', '--verbose'],
      when,
    );
    expect(code, stderr).toBe(130);
    expect(stderr.trimEnd().split('\n').at(-1)).toMatch(INTERRUPTED);
    expect(stderr, stderr).not.toMatch(/Error:|\n\s+at |ERRORED|hint:|curl exit undefined/);
    expect(runId).toMatch(/^[0-9a-f]{6}$/); // found while the run was up, so its leftovers were looked for
    expect(leftovers).toEqual([]);
  });

  it('Ctrl-C typed on a terminal with a spinner reaches the run', async () => {
    const dir = await tempDir();
    // a pty 100 columns wide, so the spinner runs; ^C goes in as a keypress
    const { CI: _ci, ...env } = process.env; // CI set at all means plain lines
    const child = spawn(
      'script',
      ['-qfec', `stty cols 100 rows 30; node ${CLI} run --all --verbose`, join(dir, 'typescript')],
      {
        cwd: PACKAGE_ROOT,
        env,
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    let screen = '';
    let typed = false;
    child.stdout.on('data', (b: Buffer) => {
      screen += b.toString();
      if (!typed && /lab up for fix/.test(screen)) {
        typed = true;
        child.stdin.write('\x03');
      }
    });
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(code, screen.slice(-600)).toBe(130);
    expect(screen).toMatch(/SIGINT: (tore down the labs of|no lab was up)/);
    expect(screen).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/); // the spinner did run
  });

  it('clean names a live run it leaves alone', async () => {
    const child = spawn('node', [CLI, 'run', 'stale-sock-lb-program', 'cilium-kube-proxy-forward-race', '--verbose'], {
      cwd: PACKAGE_ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const ended = new Promise((resolve) => child.once('close', resolve));
    await new Promise<void>((resolve) =>
      child.stderr.on('data', (b: Buffer) => /lab up for fix/.test(b.toString()) && resolve()),
    );
    // what `clean` prints as "left alone: ...", read without reaping: the host tests' crash-and-clean
    // runs alongside and must find its own leftovers
    const live = await liveRuns();
    child.kill('SIGINT');
    await ended;
    expect(live).toContainEqual(
      expect.stringMatching(
        new RegExp(`^netns run [0-9a-f]{6} \\(\\d+ namespace\\(s\\)\\), owner pid ${child.pid} still running$`),
      ),
    );
  });

  it('a pseudo-terminal of 0 columns gets plain progress lines and the run ends', async () => {
    const dir = await tempDir();
    const log = join(dir, 'typescript');
    // script copies the size of a terminal it runs in: set 0 x 0 inside, as a pty without a size has
    const r = await runProcess(
      'script',
      ['-qfec', `stty cols 0 rows 0; node ${CLI} run service-no-endpoints-reject`, log],
      { cwd: PACKAGE_ROOT, env: { COLUMNS: undefined, CI: undefined } },
    );
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('1 passed, 0 failed');
    // no spinner frame, no line clearing
    expect(r.stdout).not.toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/);
    expect(r.stdout).not.toContain('\x1b[2K');
  });

  it('--json - writes the report to stdout and the summary to stderr', async () => {
    const r = await runProcess('node', [CLI, 'run', 'service-no-endpoints-reject', '--json', '-'], {
      cwd: PACKAGE_ROOT,
    });
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout).summary).toMatchObject({ passed: 1 });
    expect(r.stderr).toContain('1 passed, 0 failed');
  });

  it('explain removes its temporary evidence directory', async () => {
    const tmp = await tempDir();
    const r = await runProcess('node', [CLI, 'explain', 'service-no-endpoints-reject'], {
      cwd: PACKAGE_ROOT,
      env: { TMPDIR: tmp },
    });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('service-no-endpoints-reject: passed');
    expect(r.stdout).not.toContain('evidence: ');
    expect((await readdir(tmp)).filter((f) => f.startsWith('netrepro-explain-'))).toEqual([]);
  });
});
