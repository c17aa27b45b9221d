// `netrepro clean`: finds what earlier runs left behind by the run prefix and removes it.
// A run whose owner process is still alive is left alone unless forced, so a clean never
// pulls a lab from under a run in progress; nothing without our prefix is ever touched.
import { existsSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { RUN_PREFIX } from '../../contract/run-id.ts';
import { runCommand } from '../../contract/command.ts';
import { labNames, NETNS_DIR, STATE_ROOT } from '../namespaces/lab-names.ts';
import { removeNamespaces } from '../namespaces/namespace-batch.ts';
import { CGROUP_ROOT, removeRunCgroups } from './run-cgroups.ts';

const list = (dir: string) => readdir(dir).catch(() => [] as string[]);

/** The owner's pid while it is alive (this process counts), otherwise undefined. */
async function liveOwner(runId: string): Promise<number | undefined> {
  try {
    const { pid } = JSON.parse(await readFile(`${STATE_ROOT}/${runId}/owner.json`, 'utf8')) as { pid: number };
    if (pid !== process.pid) process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

/** The run was kept with `run --keep`: alive as far as a clean without --force is concerned. */
const kept = (runId: string) => existsSync(labNames(runId).keptMark);

/** Every run with something on this host: by its namespaces, state directory or cgroup. */
async function runsFound(): Promise<{ runs: Set<string>; namespaces: string[] }> {
  const namespaces = (await list(NETNS_DIR)).filter((n) => RUN_PREFIX.test(n));
  const runIds = (names: string[]) => names.filter((d) => /^[0-9a-f]{6}$/.test(d));
  return {
    runs: new Set([
      ...namespaces.map((n) => RUN_PREFIX.exec(n)![1]!),
      ...runIds(await list(STATE_ROOT)),
      ...runIds(await list(CGROUP_ROOT)),
    ]),
    namespaces,
  };
}

/** Runs whose owner is alive, which a clean without force leaves alone: one line each. */
export async function liveRuns(): Promise<string[]> {
  const { runs, namespaces } = await runsFound();
  const live: string[] = [];
  for (const runId of runs) {
    const pid = await liveOwner(runId);
    const count = namespaces.filter((n) => n.startsWith(`nr-${runId}-`)).length;
    if (pid !== undefined) live.push(`netns run ${runId} (${count} namespace(s)), owner pid ${pid} still running`);
    else if (kept(runId)) live.push(`netns run ${runId} (${count} namespace(s)), kept with run --keep`);
  }
  return live;
}

/** `run`: only that run's leftovers (`netrepro clean --run`), alive or not. */
export async function cleanLeftovers({ force, run }: { force: boolean; run?: string }): Promise<string[]> {
  const removed: string[] = [];
  const { runs, namespaces } = await runsFound();
  for (const runId of runs) {
    if (run !== undefined && runId !== run) continue;
    if (!force && run === undefined && ((await liveOwner(runId)) !== undefined || kept(runId))) continue;
    // pods first, then nodes, then the fabric: the reverse of creation
    const mine = namespaces.filter((n) => n.startsWith(`nr-${runId}-`)).sort((a, b) => rank(a) - rank(b));
    await removeNamespaces(mine);
    removed.push(...mine.map((ns) => `netns ${ns}`));
    // namespaces first: that ends the bpffs holders (their pins go with them) and the pods' processes
    if ((await list(`${CGROUP_ROOT}/${runId}`)).length > 0) removed.push(`cgroup ${CGROUP_ROOT}/${runId}`);
    await removeRunCgroups(runId);
    await rm(`${STATE_ROOT}/${runId}`, { recursive: true, force: true });
    removed.push(`state ${STATE_ROOT}/${runId}`);
  }
  await runCommand(['rmdir', STATE_ROOT], { reject: false });
  return removed;
}

function rank(ns: string): number {
  return ns.includes('-p-') ? 0 : ns.includes('-n-') ? 1 : 2;
}
