// What kind, minikube and k3s can do, declared without loading their libraries: commands in a node's
// namespace (docker exec / minikube ssh), pods, and Service and endpoint changes through the API, waited for
// in every node's kube-proxy rules (service-changes.ts). kind and minikube add what their node containers
// allow (below); k3s runs kube-proxy inside its own process, so it has no component to start or hold.
// None runs BPF programs from a private bpffs or has a fabric namespace or lab-name placeholders; none attaches
// a stale copy of Cilium's socket-LB program, for the reason in stale-sock-lb-gaps.ts.
import type { Capability } from '../../model/capabilities.ts';
import type { Scenario } from '../../model/scenario-schema.ts';
import type { ProviderSupport } from '../../contract/provider.ts';
import { fitComponentSteps } from './fit-component-steps.ts';
import type { ResolvedRealOptions } from './real-options.ts';
import { realMisfit } from './scenario-fit.ts';
import { STALE_SOCK_LB_LACKS_BECAUSE } from './stale-sock-lb-gaps.ts';

export const REAL_CAPABILITIES: ReadonlySet<Capability> = new Set<Capability>([
  'node-exec',
  'action/endpoint',
  'action/service',
]);

/**
 * kind and minikube (docker driver) also have hosts outside the cluster (containers on the cluster's docker
 * network), start a node component by hand (its DaemonSet's pod replaced) and reboot a node (its container
 * restarted, the components held off and let back in order): node-components.ts, docker-hosts.ts.
 */
export const CONTAINER_NODE_CAPABILITIES: ReadonlySet<Capability> = new Set<Capability>([
  ...REAL_CAPABILITIES,
  'external-hosts',
  'action/start',
  'action/reboot',
]);

/**
 * k3s runs kube-proxy inside its server process, beside the kubelet, not as a DaemonSet: there is no pod to
 * replace and nothing to hold off a restarting node, and kube-proxy is up before the kubelet starts any pod.
 */
export const K3S_LACKS_BECAUSE: Partial<Record<Capability, string>> = {
  'action/reboot':
    'k3s runs kube-proxy inside its own process, which also runs the kubelet, so after a restart kube-proxy is up before any pod (Cilium before kube-proxy cannot happen) and there is no kube-proxy DaemonSet to hold off the node',
  'action/start': 'k3s runs kube-proxy inside its own process, not as a pod that can be started anew',
};

/** The providers that run real Kubernetes: `local` on this host from the one-time build, the others through their CLIs. */
export type RealProviderName = 'local' | 'kind' | 'minikube' | 'k3s';

export function realSupport(name: Exclude<RealProviderName, 'local'>, options: ResolvedRealOptions): ProviderSupport {
  return {
    name,
    capabilities: name === 'k3s' ? REAL_CAPABILITIES : CONTAINER_NODE_CAPABILITIES,
    fit: (topology) => realMisfit(name, topology, options),
    lacksBecause:
      name === 'k3s' ? { ...STALE_SOCK_LB_LACKS_BECAUSE, ...K3S_LACKS_BECAUSE } : STALE_SOCK_LB_LACKS_BECAUSE,
    // k3s skips such steps by its capabilities
    ...(name === 'k3s' ? {} : { fitSteps: (scenario: Scenario) => fitComponentSteps(scenario, options.k8sVersion) }),
  };
}
