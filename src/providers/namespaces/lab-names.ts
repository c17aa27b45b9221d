// Every name the lab creates carries the run prefix, so parallel runs never collide and
// `netrepro clean` can find the leftovers of a crashed run (and nothing else).
import { runPrefix } from '../../contract/run-id.ts';

export const STATE_ROOT = '/run/netrepro';
export const NETNS_DIR = '/run/netns';
export function labNames(runId: string) {
  const prefix = runPrefix(runId);
  return {
    runId,
    prefix,
    stateDir: `${STATE_ROOT}/${runId}`,
    /** The Kubernetes objects a netns lab stands for (lab-cluster-objects.ts), kept current as its Services change. */
    clusterObjects: `${STATE_ROOT}/${runId}/cluster-objects.json`,
    /** Written when the run keeps the lab (`run --keep`): `netrepro clean` without --force leaves it then. */
    keptMark: `${STATE_ROOT}/${runId}/kept.json`,
    fabric: `${prefix}fabric`,
    node: (name: string) => `${prefix}n-${name}`,
    pod: (name: string) => `${prefix}p-${name}`,
    host: (name: string) => `${prefix}h-${name}`,
    netnsPath: (ns: string) => `${NETNS_DIR}/${ns}`,
  };
}

export type LabNames = ReturnType<typeof labNames>;
