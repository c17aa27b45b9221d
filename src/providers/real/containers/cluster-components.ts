// The node components a real cluster runs, in the order they came up: the scenario's start order for those
// it lists, then the others in the order the provider installed them (kube-proxy with the cluster, the CNI
// after it). kube-proxy runs unless Cilium replaces it.
import type { NodeComponentName } from '../../../model/lab-action.ts';
import type { TopologySpec } from '../../../model/scenario-schema.ts';
import { ciliumSettings } from '../common/cilium-settings.ts';
import type { RealCni } from '../common/real-options.ts';

export function clusterComponents(topology: TopologySpec, cni: RealCni): NodeComponentName[] {
  const kubeProxy = !(cni === 'cilium' && ciliumSettings(topology).kubeProxyReplacement);
  const running: NodeComponentName[] = [
    ...(kubeProxy ? (['kube-proxy'] as const) : []),
    ...(cni === 'cilium' ? (['cilium'] as const) : cni === 'flannel' ? (['flannel'] as const) : []),
  ];
  const listed = topology.startOrder.filter((c) => running.includes(c));
  return [...listed, ...running.filter((c) => !listed.includes(c))];
}
