// `netrepro clean` for the `local` provider: a run's state directory (/var/tmp/netrepro-local/nr-<id>-cluster)
// names it; when its owner process is gone (or with --force), every process in its cgroup roots (the pods)
// and in its namespaces (control plane, containerd, kubelet, kube-proxy) is killed, the namespaces and
// cgroups removed, then its files. Mounts need nothing: each node's mounts live in its own mount namespace,
// which ends with its last process.
import { existsSync } from 'node:fs';
import { readdir, readFile, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { RUN_PREFIX } from '../../../contract/run-id.ts';
import { NETNS_DIR, STATE_ROOT } from '../../namespaces/lab-names.ts';
import { removeNamespaces } from '../../namespaces/namespace-batch.ts';
import { cgroupHierarchies, removeCgroupRoot } from './local-cluster-up.ts';
import { LOCAL_STATE_ROOT } from './local-names.ts';

async function ownerAlive(dir: string): Promise<boolean> {
  try {
    const { pid } = JSON.parse(await readFile(join(dir, 'owner.json'), 'utf8')) as { pid: number };
    if (pid === process.pid) return true;
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** `run`: only that run's leftovers (`netrepro clean --run`), alive or not. */
export async function cleanLocalLeftovers({ force, run }: { force: boolean; run?: string }): Promise<string[]> {
  const removed: string[] = [];
  const runs = (await readdir(LOCAL_STATE_ROOT).catch(() => [] as string[])).filter((d) => RUN_PREFIX.test(d));
  for (const dir of runs) {
    const state = join(LOCAL_STATE_ROOT, dir);
    const runId = RUN_PREFIX.exec(dir)![1]!;
    if (run !== undefined && runId !== run) continue;
    // a run kept with --keep counts as alive: only --force or --run removes it
    if (!force && run === undefined && ((await ownerAlive(state)) || existsSync(join(state, 'kept.json')))) continue;
    const prefix = `nr-${runId}-`;
    // the pods first (their processes are in no namespace of ours), then everything in the namespaces
    const roots = new Set<string>();
    for (const h of await cgroupHierarchies())
      for (const d of await readdir(h).catch(() => [] as string[])) if (d.startsWith(prefix)) roots.add(d);
    for (const root of roots) {
      await removeCgroupRoot(root);
      removed.push(`cgroup /${root}`);
    }
    const namespaces = (await readdir(NETNS_DIR).catch(() => [] as string[])).filter((n) => n.startsWith(prefix));
    await removeNamespaces(namespaces);
    removed.push(...namespaces.map((n) => `netns ${n}`));
    await rm(state, { recursive: true, force: true });
    await rm(join(STATE_ROOT, runId), { recursive: true, force: true });
    removed.push(`state ${state}`);
  }
  await rmdir(LOCAL_STATE_ROOT).catch(() => {});
  return removed;
}
