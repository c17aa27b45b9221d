// `netrepro clean` for real clusters: every provider's cleaner whose CLI is installed. Only names
// with the run prefix are deleted; a run whose owner process is alive is kept unless forced.
import { cleanK3sLeftovers } from '../k3s/clean-k3s-leftovers.ts';
import { cleanKindLeftovers } from '../kind/clean-kind-leftovers.ts';
import { cleanMinikubeLeftovers } from '../minikube/clean-minikube-leftovers.ts';
import { onPath } from './cli-tools.ts';
import { resolveRealOptions, type RealClusterOptions } from './real-options.ts';
import { ownerAlive } from './run-dir.ts';

export async function cleanRealLeftovers({ force, options }: { force: boolean; options?: RealClusterOptions }): Promise<string[]> {
  const { workDir } = resolveRealOptions(options);
  const removable = async (runId: string) => force || !(await ownerAlive(workDir, runId));
  const removed: string[] = [];
  if (await onPath('kind')) removed.push(...(await cleanKindLeftovers(removable)));
  if (await onPath('minikube')) removed.push(...(await cleanMinikubeLeftovers(removable)));
  if (await onPath('docker')) removed.push(...(await cleanK3sLeftovers(removable)));
  return removed;
}
