// The values of a minikube (docker driver) cluster: its node names, its API server's port, how it gets its CNI.
import type { RealCni } from '../../common/real-options.ts';

/** The port minikube's API server listens on in the node container (`--apiserver-port`'s default). */
export const MINIKUBE_API_PORT = 8443;

/** Node names (and their containers'): the profile, then P-m02, P-m03... */
export const minikubeNodeNames = (profile: string, count: number) =>
  Array.from({ length: count }, (_, i) => (i === 0 ? profile : `${profile}-m${String(i + 1).padStart(2, '0')}`));

/**
 * How the cluster gets its CNI. Cilium is not minikube's `--cni=cilium`: that applies minikube's own manifest,
 * which takes none of the scenario's values (BPF masquerade, socket LB) nor the API server address the agent
 * needs to come up before kube-proxy after a reboot. So minikube installs no CNI and helm installs the pinned
 * chart with kind's values. containerd, not minikube's default docker runtime, because it sets pods up only
 * through the CNI configuration Cilium writes, as on kind.
 */
export function minikubeCniArgs(cni: RealCni): string[] {
  return cni === 'cilium' ? ['--cni=false', '--container-runtime=containerd'] : [`--cni=${cni}`];
}
