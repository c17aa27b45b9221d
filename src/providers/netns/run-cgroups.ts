// The cgroups a run's Cilium nodes put their pods in (socket-LB programs hook them), one directory per node
// under the run's: removed with the lab, or by `netrepro clean` after a run that died.
import { rmdirWhenEmpty } from '../namespaces/rmdir-when-empty.ts';
import { readdir, readFile, rmdir } from 'node:fs/promises';
import { killAll } from '../namespaces/namespace-pids.ts';

export const CGROUP_ROOT = '/sys/fs/cgroup/unified/netrepro';

export async function removeRunCgroups(runId: string): Promise<void> {
  const runDir = `${CGROUP_ROOT}/${runId}`;
  const nodes = await readdir(runDir).catch(() => [] as string[]);
  for (const node of nodes) {
    const dir = `${runDir}/${node}`;
    if (!/^[a-z]/.test(node)) continue; // cgroup control files
    const procs = await readFile(`${dir}/cgroup.procs`, 'utf8').catch(() => '');
    killAll(procs.split('\n').filter(Boolean).map(Number));
    await rmdirWhenEmpty(dir);
  }
  await rmdir(runDir).catch(() => {});
  await rmdir(CGROUP_ROOT).catch(() => {});
}
