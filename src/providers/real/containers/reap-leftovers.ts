// `reap` of the container-node providers: each deletes its own leftovers (clean-<name>-leftovers.ts) when its CLI
// is installed. Only names with the run prefix are deleted; a run whose owner process is alive is kept unless forced.
import { ownerAlive } from '../common/run-dir.ts';

/** Whether a run's leftovers may go: forced, or its owner process is gone. */
export function removableRuns(workDir: string, force: boolean): (runId: string) => Promise<boolean> {
  return async (runId) => force || !(await ownerAlive(workDir, runId));
}
