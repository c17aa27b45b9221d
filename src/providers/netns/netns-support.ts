// The embedded lab can do everything a scenario can ask for: it builds the nodes, the fabric and the
// hosts itself, runs the components by hand and holds each node's bpffs. Declared apart from the
// provider so `validate --provider netns` loads no lab code. What it cannot do is give a Service a field
// its kube-proxy release predates: the scenario then has nothing to show under that release.
import type { ProviderSupport } from '../../contract/provider.ts';
import { kubeProxyLayout } from '../../dataplane/kube-proxy-layout.ts';
import { ALL_CAPABILITIES } from '../../model/capabilities.ts';
import type { TopologySpec } from '../../model/scenario-schema.ts';

export const NETNS_SUPPORT: ProviderSupport = {
  name: 'netns',
  capabilities: new Set(ALL_CAPABILITIES),
  fit: releaseFit,
};

/** A Service field kube-proxy ignores before the release that brought it (the lab writes no rule for it). */
export function releaseFit(topology: TopologySpec): { reason: string; hint: string } | undefined {
  const layout = kubeProxyLayout(topology.kubeProxy);
  const local = topology.services.find((s) => s.internalTrafficPolicy === 'Local');
  if (local && !layout.internalTrafficPolicy) {
    return {
      reason: `svc/${local.name} has internalTrafficPolicy: Local, which kube-proxy ${topology.kubeProxy} ignores (it came with 1.22)`,
      hint: 'run it under kube-proxy 1.22 or later (a profile such as kube-proxy-1.29)',
    };
  }
  return undefined;
}
