// The scenario's Cilium options as a real cluster takes them: the helm values the container providers install
// with, and what the fit and Service checks of every real provider read (is kube-proxy replaced?).
import type { TopologySpec } from '../../../model/scenario-schema.ts';

/** The scenario's cilium options as helm values; without kube-proxy in startOrder, cilium replaces it. */
export interface CiliumSettings {
  kubeProxyReplacement: boolean;
  bpfMasquerade: boolean;
  socketLB: boolean;
  /** enable-endpoint-routes; only set when true, so the default install is unchanged */
  endpointRoutes: boolean;
  /** Routed natively between the nodes and never masqueraded: the scenario's, as the lab's datapath takes it. */
  nativeRoutingCIDR: string;
}

export function ciliumSettings(topology: TopologySpec): CiliumSettings {
  return {
    kubeProxyReplacement: !topology.startOrder.includes('kube-proxy'),
    bpfMasquerade: topology.cilium.bpfMasquerade,
    socketLB: topology.cilium.socketLB,
    endpointRoutes: topology.cilium.endpointRoutes,
    nativeRoutingCIDR: topology.cilium.nativeRoutingCIDR ?? topology.clusterCIDR,
  };
}
