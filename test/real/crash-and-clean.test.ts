// A run that dies hard (SIGKILL: no teardown) leaves a whole cluster behind: a local cluster's processes in its
// namespaces, pods in its kubelet's cgroups, its namespaces, cgroup directories and files; a kind cluster's
// Docker engine with its node container, its namespace, cgroups and state. `netrepro clean` finds it by the run
// prefix, sees its owner gone, and removes all of it.
import { spawn } from 'node:child_process';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { cgroupHierarchies } from '../../src/providers/real/local/local-cluster-up.ts';
import { LOCAL_STATE_ROOT } from '../../src/providers/real/local/local-names.ts';
import { PRIVATE_DOCKER_ROOT } from '../../src/providers/real/containers/private-docker.ts';
import { kindSkipReason, realSkipReason } from './real-support.ts';

const run = promisify(execFile);
const skip = realSkipReason();

async function leftovers(runId: string): Promise<string[]> {
  const prefix = `nr-${runId}-`;
  const out: string[] = [];
  out.push(
    ...(await readdir('/run/netns').catch(() => [] as string[]))
      .filter((n) => n.startsWith(prefix))
      .map((n) => `netns ${n}`),
  );
  out.push(
    ...(await readdir(LOCAL_STATE_ROOT).catch(() => [] as string[]))
      .filter((n) => n.startsWith(prefix))
      .map((n) => `state ${n}`),
  );
  out.push(
    ...(await readdir(PRIVATE_DOCKER_ROOT).catch(() => [] as string[]))
      .filter((n) => n.startsWith(prefix))
      .map((n) => `state ${n}`),
  );
  // a container-node run's directory (kubeconfig, kind config, owner file) in the default work directory
  const runDir = join(tmpdir(), 'netrepro', runId);
  if (existsSync(runDir)) out.push(`run directory ${runDir}`);
  for (const h of await cgroupHierarchies())
    out.push(
      ...(await readdir(h).catch(() => [] as string[]))
        .filter((d) => d.startsWith(prefix))
        .map((d) => `cgroup ${h}/${d}`),
    );
  for (const pid of (await readdir('/proc')).filter((p) => /^\d+$/.test(p))) {
    const cmd = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).replaceAll('\0', ' ');
    const cgroups = await readFile(`/proc/${pid}/cgroup`, 'utf8').catch(() => '');
    // a zombie has exited and holds nothing: it is gone once its parent reaps it (seen a moment after a clean)
    const state = / \(.*\) (\S)/.exec(await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => ''))?.[1];
    if (state === 'Z') continue;
    if (cmd.includes(prefix) || cgroups.includes(`/${prefix}`)) out.push(`process ${pid} ${cmd.slice(0, 80)}`);
  }
  return out;
}

/** Starts a cluster in a child process, kills it hard once up, runs `netrepro clean`; what clean printed and what is left. */
async function crashThenClean(provider: 'local' | 'kind') {
  const child = spawn('node', ['--import', 'tsx', 'test/real/fixtures/hold-cluster.ts', provider], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const runId = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (b: Buffer) => {
      const m = /^up ([0-9a-f]{6})$/m.exec(b.toString());
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the cluster did not come up (exit ${code})`)));
  });
  const before = await leftovers(runId);
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  const cleaned = (await run('node', ['bin/netrepro.js', 'clean'])).stdout;
  return { runId, before, cleaned, after: await leftovers(runId) };
}

describe.skipIf(skip)(`a crashed local run is reaped by netrepro clean${skip ? ` (skipped: ${skip})` : ''}`, () => {
  it('leaves nothing of the cluster after clean', async () => {
    const { runId, before, cleaned, after } = await crashThenClean('local');
    expect(before.length).toBeGreaterThan(5);
    expect(cleaned).toContain(`removed state ${LOCAL_STATE_ROOT}/nr-${runId}-cluster`);
    expect(after).toEqual([]);
  });
});

const kindSkip = kindSkipReason();
describe.skipIf(kindSkip)(
  `a crashed kind run is reaped by netrepro clean${kindSkip ? ` (skipped: ${kindSkip})` : ''}`,
  () => {
    it('leaves nothing of its Docker engine and node after clean', async () => {
      const { runId, before, cleaned, after } = await crashThenClean('kind');
      // the engine's namespace, state and cgroups, dockerd, and the node container's processes
      expect(before.filter((l) => l.startsWith('process')).length).toBeGreaterThan(10);
      expect(before).toContain(`netns nr-${runId}-docker`);
      expect(before).toContain(`run directory ${join(tmpdir(), 'netrepro', runId)}`);
      expect(cleaned).toContain(`docker engine nr-${runId}-docker`);
      expect(cleaned).toContain(`run directory ${join(tmpdir(), 'netrepro', runId)}`);
      expect(after).toEqual([]);
    });
  },
);
