// What kind, minikube and k3s can do, declared without loading their libraries: commands in a node's
// namespace (docker exec / minikube ssh), pods, and Service and endpoint changes through the API, waited for
// in every node's kube-proxy rules (service-changes.ts). Their own agents run kube-proxy and Cilium, so no
// other lab action (starting a component by hand, a reboot that empties a node's iptables, BPF programs from
// a private bpffs), no hosts outside the cluster, no fabric namespace, no lab-name placeholders.
import type { Capability } from '../../model/capabilities.ts';
import type { ProviderSupport } from '../../contract/provider.ts';
import type { ResolvedRealOptions } from './real-options.ts';
import { realMisfit } from './scenario-fit.ts';

export const REAL_CAPABILITIES: ReadonlySet<Capability> = new Set<Capability>([
  'node-exec',
  'action/endpoint',
  'action/service',
]);

/** The providers that run real Kubernetes: `local` on this host from the one-time build, the others through their CLIs. */
export type RealProviderName = 'local' | 'kind' | 'minikube' | 'k3s';

export function realSupport(name: Exclude<RealProviderName, 'local'>, options: ResolvedRealOptions): ProviderSupport {
  return { name, capabilities: REAL_CAPABILITIES, fit: (topology) => realMisfit(name, topology, options) };
}
