// Every name the `local` provider creates carries the run prefix (nr-<run id>-), as the netns lab's do:
// network namespaces (the same names as the lab's: the fabric, nodes, hosts), the Kubernetes node names,
// the cgroup root of each kubelet, and the state directory holding every file of the run.
import { labNames } from '../../namespaces/lab-names.ts';

/** Where each run's files live (etcd data, certificates, containerd and kubelet roots, logs): on disk. */
export const LOCAL_STATE_ROOT = '/var/tmp/netrepro-local';

export function localNames(runId: string) {
  const lab = labNames(runId);
  const state = `${LOCAL_STATE_ROOT}/${lab.prefix}cluster`;
  return {
    ...lab,
    state,
    /** Written when the run keeps the cluster (`run --keep`): `netrepro clean` without --force leaves it then. */
    keptMark: `${state}/kept.json`,
    /** The Kubernetes node name of a scenario node (what kubelet registers). */
    kubeNode: (node: string) => `${lab.prefix}${node}`,
    /** The directory of one node's containerd, kubelet and mount namespace. */
    nodeDir: (node: string) => `${state}/${node}`,
    /** The kubelet's --cgroup-root, in every cgroup hierarchy. */
    cgroupRoot: (node: string) => `${lab.prefix}${node}`,
  };
}

export type LocalNames = ReturnType<typeof localNames>;
