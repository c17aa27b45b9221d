// The kind cluster config for a topology: one kind node per scenario node (the first is the
// control plane), no default CNI (the scenario's shape is installed instead), the scenario's pod CIDR.
import { stringify } from 'yaml';

/** kind's docker network (kind's KIND_EXPERIMENTAL_DOCKER_NETWORK can rename it; netrepro never sets that). */
/** kind's own default Service range, written into its config so that `{cidr/services}` names it. */
export const KIND_SERVICE_SUBNET = '10.96.0.0/16';

export const KIND_NETWORK = 'kind';

export interface KindConfigInput {
  name: string;
  nodeCount: number;
  image: string;
  podSubnet: string;
  /** `none` when cilium replaces kube-proxy. */
  kubeProxyMode: 'iptables' | 'none';
}

export function kindConfig(input: KindConfigInput): string {
  const nodes = Array.from({ length: input.nodeCount }, (_, i) => ({
    role: i === 0 ? 'control-plane' : 'worker',
    image: input.image,
  }));
  return stringify({
    kind: 'Cluster',
    apiVersion: 'kind.x-k8s.io/v1alpha4',
    name: input.name,
    networking: {
      disableDefaultCNI: true,
      podSubnet: input.podSubnet,
      serviceSubnet: KIND_SERVICE_SUBNET,
      kubeProxyMode: input.kubeProxyMode,
    },
    nodes,
  });
}

/** kind's node (and container) names, in config order. */
export function kindNodeNames(name: string, nodeCount: number): string[] {
  return Array.from({ length: nodeCount }, (_, i) =>
    i === 0 ? `${name}-control-plane` : i === 1 ? `${name}-worker` : `${name}-worker${i}`,
  );
}

/** The kube context `kind create cluster` writes for a cluster. */
export const kindContext = (name: string) => `kind-${name}`;
