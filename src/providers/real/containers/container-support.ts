// What kind, minikube and k3s can do, declared without loading their libraries: commands in a node's
// namespace (docker exec / minikube ssh), pods, and Service and endpoint changes through the API, waited for
// in every node's kube-proxy rules (service-changes.ts), and what their node containers allow (below). k3s
// runs its own kube-proxy and flannel inside its process, so only its cilium shape, where netrepro runs
// upstream kube-proxy as a DaemonSet, has components to start or hold. None runs BPF programs from a private
// bpffs or has a fabric namespace or lab-name placeholders; none attaches a stale copy of Cilium's socket-LB
// program, for the reason in stale-sock-lb-gaps.ts.
import type { Capability } from '../../../model/capabilities.ts';
import type { Scenario } from '../../../model/scenario-schema.ts';
import type { ProviderSupport } from '../../../contract/provider.ts';
import { fitComponentSteps, fitEmbeddedComponents } from './fit-component-steps.ts';
import { fitServiceSteps } from '../common/fit-service-steps.ts';
import type { RealProviderName, ResolvedRealOptions } from '../common/real-options.ts';
import { fitCni, realMisfit } from '../common/scenario-fit.ts';
import { STALE_SOCK_LB_LACKS_BECAUSE } from './stale-sock-lb-gaps.ts';

export const REAL_CAPABILITIES: ReadonlySet<Capability> = new Set<Capability>([
  'node-exec',
  'action/endpoint',
  'action/delete',
  'action/service',
]);

/**
 * kind, minikube (docker driver) and k3s also have hosts outside the cluster (containers on the cluster's docker
 * network), start a node component by hand (its DaemonSet's pod replaced) and reboot a node (its container
 * restarted, the components held off and let back in order): node-components.ts, docker-hosts.ts; and read a
 * node's BPF SNAT table through its Cilium agent (cilium-snat-table.ts; an snat check is on cilium scenarios only).
 */
export const CONTAINER_NODE_CAPABILITIES: ReadonlySet<Capability> = new Set<Capability>([
  ...REAL_CAPABILITIES,
  'external-hosts',
  'kube-proxy-restart',
  'action/start',
  'action/reboot',
  'snat-table',
]);

/** k3s with its own kube-proxy and flannel (every shape but cilium): hosts, no components to start or hold. */
export const K3S_EMBEDDED_CAPABILITIES: ReadonlySet<Capability> = new Set<Capability>([
  ...REAL_CAPABILITIES,
  'external-hosts',
]);

/**
 * k3s runs kube-proxy and flannel inside its server process, beside the kubelet, not as DaemonSets: there is no
 * pod to replace and nothing to hold off a restarting node, and both are up before the kubelet starts any pod.
 * Its cilium shape differs: k3s starts without its kube-proxy and netrepro deploys upstream kube-proxy as a
 * DaemonSet (k3s/k3s-kube-proxy.ts).
 */
export const K3S_EMBEDDED_BECAUSE: Partial<Record<Capability, string>> = {
  'action/reboot':
    'k3s runs kube-proxy and flannel inside its own process, which also runs the kubelet, so after a restart they are up before any pod and there is no DaemonSet to hold off the node (its cilium shape runs kube-proxy as a DaemonSet: NETREPRO_CNI=cilium)',
  'kube-proxy-restart':
    'k3s runs kube-proxy inside its own process, not as a pod that can be started anew (its cilium shape runs kube-proxy as a DaemonSet: NETREPRO_CNI=cilium)',
  'action/start':
    'k3s runs kube-proxy and flannel inside its own process, not as pods that can be started anew (its cilium shape runs kube-proxy as a DaemonSet: NETREPRO_CNI=cilium)',
};

export function realSupport(name: Exclude<RealProviderName, 'local'>, options: ResolvedRealOptions): ProviderSupport {
  // a run that selects no CNI declares what the cilium shape can do; a flannel scenario's steps are refused below
  const embedded = name === 'k3s' && options.cni !== undefined && options.cni !== 'cilium';
  return {
    name,
    capabilities: embedded ? K3S_EMBEDDED_CAPABILITIES : CONTAINER_NODE_CAPABILITIES,
    fit: (topology) => realMisfit(name, topology, options),
    fitSteps: (scenario: Scenario) =>
      fitServiceSteps(scenario, options.k8sVersion, name) ??
      (name === 'k3s' ? k3sEmbeddedSteps(scenario, options) : undefined) ??
      fitComponentSteps(scenario, options.k8sVersion),
    lacksBecause: embedded ? { ...STALE_SOCK_LB_LACKS_BECAUSE, ...K3S_EMBEDDED_BECAUSE } : STALE_SOCK_LB_LACKS_BECAUSE,
  };
}

/** A start or reboot step of a scenario k3s runs with its own kube-proxy and flannel. */
function k3sEmbeddedSteps(scenario: Scenario, options: ResolvedRealOptions) {
  const fit = fitCni(scenario.topology, options);
  if (!('cni' in fit) || fit.cni === 'cilium') return undefined;
  return fitEmbeddedComponents(
    scenario,
    'k3s runs kube-proxy and flannel inside its own process: no pod to start anew, nothing to hold off a restarting node (its cilium shape runs kube-proxy as a DaemonSet)',
  );
}
