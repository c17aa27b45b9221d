// What the `local` provider can do, declared without loading it: it runs real Kubernetes v1.20.2 (Debian
// bookworm's `kubernetes` source package) with the nodes as network namespaces of this host, so besides
// node commands it can run them on the fabric that joins the nodes, name a node's port on that fabric,
// and change Services and endpoints through the API (the real kube-proxy then syncs its rules itself).
// Its kube-proxy can be restarted with another configuration. What it cannot: Cilium (not packaged in Debian),
// kube-proxy of another release (one build), flanneld started by hand (it writes flannel's rules itself),
// BPF programs of the lab's own datapath.
import type { Capability } from '../../../model/capabilities.ts';
import type { TopologySpec } from '../../../model/scenario-schema.ts';
import type { Misfit, ProviderSupport } from '../../../contract/provider.ts';
import type { ResolvedRealOptions } from '../common/real-options.ts';
import { fitServiceSteps } from '../common/fit-service-steps.ts';
import {
  fitCaptured,
  fitEndpointConditions,
  fitKubeProxy,
  fitNodePorts,
  fitNodeSetup,
} from '../common/scenario-fit.ts';

/** The release of Debian bookworm's `kubernetes` source package (1.20.5+really1.20.2). */
export const LOCAL_K8S_VERSION = 'v1.20.2';

export const LOCAL_CAPABILITIES: ReadonlySet<Capability> = new Set<Capability>([
  'node-exec',
  'external-hosts',
  'fabric',
  // the native agent runs in a node's namespace as on a host
  'node-agent',
  'path/port',
  'path/veth',
  // the helper programs are in the pod image: a `{bin/NAME}` command runs in a pod
  'path/bin',
  'action/endpoint',
  'action/delete',
  'action/service',
  // its one kube-proxy build restarted, with another configuration if the step gives one
  'kube-proxy-restart',
  // a cluster of the run's own: the scenario's ClusterIPs, and pods started in order get the lab's pod IPs
  'scenario-addresses',
]);

export function localMisfit(topology: TopologySpec, options: Pick<ResolvedRealOptions, 'cni'>): Misfit | undefined {
  const captured = fitCaptured(topology);
  if (captured) return captured;
  const cni: string = topology.cni;
  if (cni === 'cilium')
    return {
      reason: 'Cilium is not packaged in Debian, so the local cluster cannot run it',
      hint: 'run it with --provider netns, or kind',
    };
  if (cni !== 'bridge' && cni !== 'flannel') return { reason: `CNI shape ${cni} has no local install` };
  if (options.cni && options.cni !== cni)
    return {
      reason: `scenario needs CNI ${cni}, this run selects ${options.cni} (NETREPRO_CNI)`,
      hint: `run it with NETREPRO_CNI=${cni}`,
    };
  const proxy = fitKubeProxy(topology, LOCAL_K8S_VERSION);
  if (proxy)
    return {
      reason: proxy.reason,
      hint: 'run it under a 1.15-1.28 kube-proxy profile, e.g. `--profile kube-proxy-1.20` (the local cluster is Kubernetes v1.20.2)',
    };
  return fitNodePorts(topology) ?? fitEndpointConditions(topology) ?? fitNodeSetup(topology, true);
}

export function localSupport(options: Pick<ResolvedRealOptions, 'cni'>): ProviderSupport {
  return {
    name: 'local',
    capabilities: LOCAL_CAPABILITIES,
    fit: (topology) => localMisfit(topology, options),
    fitSteps: (scenario) => fitServiceSteps(scenario, LOCAL_K8S_VERSION, 'local'),
  };
}
