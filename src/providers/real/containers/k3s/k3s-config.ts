// The values of a k3s cluster in one container: its docker network, its server's arguments, its context's name.
import { parse, stringify } from 'yaml';
import type { TopologySpec } from '../../../../model/scenario-schema.ts';
import type { RealCni } from '../../common/real-options.ts';

/** The docker network testcontainers puts the k3s container on, named so the hosts can join it. */
export const K3S_NETWORK = 'bridge';

/**
 * k3s's own kube-proxy runs inside its process, which Cilium beside kube-proxy cannot have (no pod to hold off
 * a rebooting node), and Cilium's kube-proxy replacement needs none: with Cilium it is always off.
 */
export function k3sServerArgs(topology: TopologySpec, cni: RealCni): string[] {
  return [
    'server',
    '--disable=traefik',
    `--cluster-cidr=${topology.clusterCIDR}`,
    ...(cni === 'cilium' ? ['--flannel-backend=none', '--disable-network-policy', '--disable-kube-proxy'] : []),
  ];
}

/** k3s names its context `default`; ours carries the run prefix so the context guard can tell it apart. */
export function renameContext(kubeconfig: string, context: string): string {
  const doc = parse(kubeconfig) as { contexts: { name: string }[]; 'current-context': string };
  for (const c of doc.contexts) if (c.name === doc['current-context']) c.name = context;
  doc['current-context'] = context;
  return stringify(doc);
}
