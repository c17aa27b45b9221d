// `reap` of the container-node providers: each deletes its own leftovers (clean-<name>-leftovers.ts) when its CLI
// is installed, then the run directories of those runs (run-dir.ts). Only names with the run prefix are deleted; a
// run whose owner process is alive is kept unless forced.
import { ownerAlive, reapRunDirs } from '../common/run-dir.ts';

/** Whether a run's leftovers may go: forced, or its owner process is gone. */
export function removableRuns(workDir: string, force: boolean): (runId: string) => Promise<boolean> {
  return async (runId) => force || !(await ownerAlive(workDir, runId));
}

/** What `clean` removes of the runs `removableRuns` lets go, then those runs' directories in `workDir`. */
export async function reapRuns(
  workDir: string,
  force: boolean,
  clean: (removable: (runId: string) => Promise<boolean>) => Promise<string[]>,
): Promise<string[]> {
  const removable = removableRuns(workDir, force);
  return [...(await clean(removable)), ...(await reapRunDirs(workDir, removable))];
}
