// What each component writes on one node of a topology, as iptables operations: shared by the lab
// (which runs them) and `netrepro render` (which prints their result), so both say the same thing.
import type { KubeProxyConfig } from '../model/lab-action.ts';
import type { TopologySpec } from '../model/scenario-schema.ts';
import { endpointSlices, serviceObject, type PodPlacement } from '../contract/kube-objects.ts';
import type { IptablesOp } from './iptables-ops.ts';
import { kubeProxyLayout } from './kube-proxy-layout.ts';
import { kubeProxyRules } from './kube-proxy-rules.ts';
import { ciliumStart, flannelStart, kubeProxyStart, type NodeComponent } from './node-components.ts';
import { nodeAddress } from './node-network.ts';

/** What a component reads from the node when it starts. */
export interface NodeFacts {
  placements: ReadonlyMap<string, PodPlacement>;
  /** nf_conntrack_tcp_be_liberal at kube-proxy's start. */
  beLiberal: boolean;
  /** Whether kube-proxy could create its nfacct counters (the lab has no nfacct tool: false). */
  nfacctCounters: boolean;
}

/**
 * The components that start at boot on a node of this CNI shape: in the topology's `startOrder` (flanneld last
 * when it does not name it), or in a reboot's own `order`, which starts exactly what it names.
 */
export function bootOrder(topology: TopologySpec, order?: readonly NodeComponent[]): NodeComponent[] {
  const fits = (order ?? topology.startOrder).filter((c) => c === 'kube-proxy' || c === topology.cni);
  if (!order && topology.cni === 'flannel' && !fits.includes('flannel')) fits.push('flannel');
  return fits;
}

/** What kube-proxy runs as on a node: its release and configuration. */
export interface KubeProxySettings extends KubeProxyConfig {
  release: string;
}

/** kube-proxy as every node starts it at boot: the topology's release and `kubeProxyConfig`. */
export function bootKubeProxy(topology: TopologySpec): KubeProxySettings {
  return {
    release: topology.kubeProxy,
    clusterCIDR: topology.kubeProxyConfig.clusterCIDR ?? topology.clusterCIDR,
    masqueradeAll: topology.kubeProxyConfig.masqueradeAll ?? false,
  };
}

export function componentStart(
  topology: TopologySpec,
  nodeName: string,
  component: NodeComponent,
  facts: NodeFacts,
  proxy = bootKubeProxy(topology),
): IptablesOp[] {
  const node = topology.nodes.find((n) => n.name === nodeName);
  if (!node) throw new Error(`no node ${nodeName}`);
  if (component === 'cilium') return ciliumStart(topology.cilium.version, topology.cilium.endpointRoutes);
  if (component === 'flannel') return flannelStart(node.podCIDR, topology.clusterCIDR);
  const layout = kubeProxyLayout(proxy.release);
  const rules = kubeProxyRules({
    layout,
    services: topology.services.map(serviceObject),
    slices: topology.services.flatMap((s) => endpointSlices(s, facts.placements, topology.pods)),
    clusterCIDR: proxy.clusterCIDR,
    masqueradeAll: proxy.masqueradeAll,
    nodeName,
    nodeIP: nodeAddress(topology.nodes, nodeName),
    beLiberal: facts.beLiberal,
    nfacctCounters: facts.nfacctCounters,
  });
  return kubeProxyStart(layout, rules);
}

/** A node's boot: rules gone, built-in policies as set at boot, then the components in order. */
export function bootOps(
  topology: TopologySpec,
  nodeName: string,
  facts: NodeFacts,
  order?: readonly NodeComponent[],
): IptablesOp[] {
  const node = topology.nodes.find((n) => n.name === nodeName)!;
  return [
    { op: 'reset', forwardPolicy: node.forwardPolicy },
    ...bootOrder(topology, order).flatMap((c) => componentStart(topology, nodeName, c, facts)),
  ];
}
