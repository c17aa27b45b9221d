// `reap` of the real providers: their leftovers, when their CLI is installed. Only names with the run
// prefix are deleted; a run whose owner process is alive is kept unless forced.
import { cleanK3sLeftovers } from './k3s/clean-k3s-leftovers.ts';
import { cleanKindLeftovers } from './kind/clean-kind-leftovers.ts';
import { cleanMinikubeLeftovers } from './minikube/clean-minikube-leftovers.ts';
import { onPath } from './cli-tools.ts';
import { ownerAlive } from '../common/run-dir.ts';

const CLEANERS = {
  // kind clusters with the kind on PATH, and private engines, which need none
  kind: { tool: undefined, clean: cleanKindLeftovers },
  minikube: { tool: 'minikube', clean: cleanMinikubeLeftovers },
  // k3s containers and every provider's tcpdump/conntrack helper containers: by their docker label
  k3s: { tool: 'docker', clean: cleanK3sLeftovers },
} as const;

export async function reapReal(
  provider: keyof typeof CLEANERS,
  { force, workDir }: { force: boolean; workDir: string },
): Promise<string[]> {
  const { tool, clean } = CLEANERS[provider];
  if (tool && !(await onPath(tool))) return [];
  return clean(async (runId) => force || !(await ownerAlive(workDir, runId)));
}
