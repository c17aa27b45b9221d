// What kind, minikube and k3s can do, declared without loading their libraries: commands in a node's
// namespace (docker exec / minikube ssh), pods, and Service and endpoint changes through the API, waited for
// in every node's kube-proxy rules (service-changes.ts). kind adds what its node containers allow (below).
// None runs BPF programs from a private bpffs or has a fabric namespace or lab-name placeholders.
import type { Capability } from '../../model/capabilities.ts';
import type { Scenario } from '../../model/scenario-schema.ts';
import type { ProviderSupport } from '../../contract/provider.ts';
import { fitComponentSteps } from './fit-component-steps.ts';
import type { ResolvedRealOptions } from './real-options.ts';
import { realMisfit } from './scenario-fit.ts';

export const REAL_CAPABILITIES: ReadonlySet<Capability> = new Set<Capability>([
  'node-exec',
  'action/endpoint',
  'action/service',
]);

/**
 * kind also has hosts outside the cluster (containers on its docker network), starts a node component by
 * hand (its DaemonSet's pod replaced) and reboots a node (`docker restart` of its container, the components
 * held off and let back in order): node-components.ts, kind/kind-hosts.ts.
 */
export const KIND_CAPABILITIES: ReadonlySet<Capability> = new Set<Capability>([
  ...REAL_CAPABILITIES,
  'external-hosts',
  'action/start',
  'action/reboot',
]);

/** The providers that run real Kubernetes: `local` on this host from the one-time build, the others through their CLIs. */
export type RealProviderName = 'local' | 'kind' | 'minikube' | 'k3s';

export function realSupport(name: Exclude<RealProviderName, 'local'>, options: ResolvedRealOptions): ProviderSupport {
  return {
    name,
    capabilities: name === 'kind' ? KIND_CAPABILITIES : REAL_CAPABILITIES,
    fit: (topology) => realMisfit(name, topology, options),
    // only kind starts components and reboots nodes; the others skip such steps by their capabilities
    ...(name === 'kind' ? { fitSteps: (scenario: Scenario) => fitComponentSteps(scenario, options.k8sVersion) } : {}),
  };
}
