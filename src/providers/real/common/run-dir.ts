// Per-run working directory (kubeconfig, generated configs) with an owner file, so `clean` can
// tell a crashed run's leftovers from a run still in progress.
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunContext } from '../../../contract/provider.ts';
import type { RealCluster } from './real-cluster.ts';

export async function prepareRunDir(workDir: string, run: RunContext, cluster: RealCluster): Promise<string> {
  const dir = join(workDir, run.runId);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'owner.json'), `${JSON.stringify({ pid: process.pid })}\n`);
  cluster.onDestroy(`run directory ${dir}`, () => rm(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * The run directories in `workDir` whose runs `removable` lets go (their owner died, or forced): what a crashed
 * run left there is its kubeconfig and configs, removed with the rest of its leftovers.
 */
export async function reapRunDirs(workDir: string, removable: (runId: string) => Promise<boolean>): Promise<string[]> {
  const removed: string[] = [];
  for (const runId of await readdir(workDir).catch(() => [] as string[])) {
    if (!/^[0-9a-f]{6}$/.test(runId) || !(await removable(runId))) continue;
    await rm(join(workDir, runId), { recursive: true, force: true });
    removed.push(`run directory ${join(workDir, runId)}`);
  }
  return removed;
}

export async function ownerAlive(workDir: string, runId: string): Promise<boolean> {
  try {
    const { pid } = JSON.parse(await readFile(join(workDir, runId, 'owner.json'), 'utf8')) as { pid: number };
    if (pid === process.pid) return true;
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
