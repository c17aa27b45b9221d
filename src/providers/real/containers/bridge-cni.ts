// The `bridge` CNI shape on a real cluster, as the netns lab has it: a cni0 bridge per node with
// host-local IPAM on the node's podCIDR, and plain routes to the other nodes' podCIDRs.
// kind node images carry only some reference plugins, so the pinned release is fetched into each node.
import type { Target } from '../../../contract/provider.ts';
import type { ClusterNode } from '../common/kube-api.ts';
import { bridgeConflistText } from '../../../dataplane/bridge-conflist.ts';

export const BRIDGE_CONFLIST = '/etc/cni/net.d/10-netrepro-bridge.conflist';

/** Reference plugins (bridge, host-local, loopback, portmap) from the pinned release, into /opt/cni/bin. */
export async function installCniPlugins(node: Target, pluginsUrl: string): Promise<void> {
  await node.exec(['mkdir', '-p', '/opt/cni/bin', '/etc/cni/net.d']);
  await node.exec(['curl', '-fsSL', '--retry', '3', '-o', '/tmp/netrepro-cni-plugins.tgz', pluginsUrl], {
    timeoutMs: 120_000,
  });
  await node.exec([
    'tar',
    '-C',
    '/opt/cni/bin',
    '-xzf',
    '/tmp/netrepro-cni-plugins.tgz',
    './bridge',
    './host-local',
    './loopback',
    './portmap',
  ]);
}

/** Writes the conflist for `self` and routes to every other node's podCIDR. */
export async function configureBridge(node: Target, self: ClusterNode, all: readonly ClusterNode[]): Promise<void> {
  await node.exec(['tee', BRIDGE_CONFLIST], { input: bridgeConflistText(requireCidr(self)) });
  for (const other of all) {
    if (other.name === self.name) continue;
    await node.exec(['ip', 'route', 'replace', requireCidr(other), 'via', other.internalIP]);
  }
}

function requireCidr(node: ClusterNode): string {
  if (!node.podCIDR) throw new Error(`node ${node.name} has no spec.podCIDR (is --allocate-node-cidrs on?)`);
  return node.podCIDR;
}
