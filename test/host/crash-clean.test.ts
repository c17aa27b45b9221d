// kill -9 in the middle of a run, then `netrepro clean`: nothing of that run may remain (namespaces,
// their processes, the bpffs holders with their pins, cgroups, state), and nothing else is touched.
import { spawn } from 'node:child_process';
import { runProcess } from '../child-process.ts';
import { existsSync, readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { namespacePids } from '../../src/providers/namespaces/namespace-pids.ts';
import { labSkipReason } from '../lab-support.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

/** Run ids whose owner is `pid`, from /run/netrepro/<id>/owner.json. */
async function runsOf(pid: number): Promise<string[]> {
  const ids = await readdir('/run/netrepro').catch(() => [] as string[]);
  return ids.filter((id) => {
    try {
      return (JSON.parse(readFileSync(`/run/netrepro/${id}/owner.json`, 'utf8')) as { pid: number }).pid === pid;
    } catch {
      return false;
    }
  });
}

/** SIGKILL returns before the process is gone: wait for it to end (a zombie holds no namespace), bounded. */
async function ended(pid: string): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    const state = existsSync(`/proc/${pid}/status`)
      ? /State:\s+(\S)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
      : undefined;
    if (state === undefined || state === 'Z') return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

const namespacesOf = async (runId: string) =>
  (await readdir('/run/netns').catch(() => [] as string[])).filter((n) => n.startsWith(`nr-${runId}-`));

describe.skipIf(labSkipReason)('crash, then clean', () => {
  it('kill -9 mid-run leaves a lab behind; netrepro clean removes all of it', async () => {
    const run = runProcess('node', ['bin/netrepro.js', 'run', 'stale-sock-lb-program'], { cwd: ROOT });
    const pid = run.pid!;
    // wait until the lab is really up: the socket-LB cgroup has the pods' programs in it and the node
    // its bpffs holder (the lab builds these side by side, so each is waited for)
    let runId: string | undefined;
    let pids: string[] = [];
    for (let i = 0; i < 400 && !runId; i++) {
      const [id] = await runsOf(pid);
      const cgroup = `/sys/fs/cgroup/unified/netrepro/${id}/node-a/cgroup.procs`;
      const inCgroup = id && existsSync(cgroup) ? readFileSync(cgroup, 'utf8').trim() : '';
      pids = id
        ? ((await namespacePids([`/run/netns/nr-${id}-n-node-a`])).get(`/run/netns/nr-${id}-n-node-a`) ?? []).map(
            String,
          )
        : [];
      if (id && inCgroup && pids.length > 0 && (await namespacesOf(id)).length === 4) runId = id;
      else await new Promise((r) => setTimeout(r, 25));
    }
    expect(runId, 'the run never brought its lab up').toBeDefined();
    expect(pids.length).toBeGreaterThan(0); // the bpffs holder at least
    process.kill(pid, 'SIGKILL');
    await run;
    expect((await namespacesOf(runId!)).length).toBe(4); // the crash really left the lab behind

    const clean = await runProcess('node', ['bin/netrepro.js', 'clean'], { cwd: ROOT });
    expect(clean.stdout).toContain(`removed netns nr-${runId}-n-node-a`);
    expect(await namespacesOf(runId!)).toEqual([]);
    for (const p of pids) expect(await ended(p), `process ${p} of the crashed run`).toBe(true);
    expect(existsSync(`/sys/fs/cgroup/unified/netrepro/${runId}`)).toBe(false);
    expect(existsSync(`/run/netrepro/${runId}`)).toBe(false);
  });

  it('a reader that goes away mid-run (`run ... | head`): the lab is torn down, then exit 141', async () => {
    const child = spawn('node', ['bin/netrepro.js', 'run', 'br-netfilter-clusterip-same-node'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
    let runId: string | undefined;
    for (let i = 0; i < 400 && !runId; i++) {
      const [id] = await runsOf(child.pid!);
      if (id && (await namespacesOf(id)).length === 4) runId = id;
      else await new Promise((r) => setTimeout(r, 25));
    }
    expect(runId, 'the run never brought its lab up').toBeDefined();
    // the reader closes its end, as `head` does once it has its lines
    child.stdout.destroy();
    child.stderr.destroy();
    expect(await exited).toBe(141);
    expect(await namespacesOf(runId!)).toEqual([]);
    expect(existsSync(`/run/netrepro/${runId}`)).toBe(false);
  });
});
