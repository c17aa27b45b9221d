// The `bridge` CNI shape on a real cluster, as the netns lab has it: a cni0 bridge per node with
// host-local IPAM on the node's podCIDR, and plain routes to the other nodes' podCIDRs.
// kindest/node images carry only some reference plugins, so the pinned release is fetched into each node; the
// kind build's node image ships all four.
import { HarnessError } from '../../../model/errors.ts';
import type { Target } from '../../../contract/provider.ts';
import type { ClusterNode, KubeApi } from '../common/kube-api.ts';
import { bridgeConflistText } from '../../../dataplane/bridge-conflist.ts';

export const BRIDGE_CONFLIST = '/etc/cni/net.d/10-netrepro-bridge.conflist';

const PLUGINS = ['bridge', 'host-local', 'loopback', 'portmap'] as const;

/**
 * Reference plugins (bridge, host-local, loopback, portmap) in /opt/cni/bin: kept where the node image ships them
 * (the kind build's does), else fetched from the pinned release into the node, saying so.
 */
export async function installCniPlugins(node: Target, pluginsUrl: string, log: (line: string) => void): Promise<void> {
  const shipped = await node.exec(['sh', '-c', PLUGINS.map((p) => `test -x /opt/cni/bin/${p}`).join(' && ')], {
    reject: false,
  });
  if (shipped.exitCode === 0) return log(`${node.ref}: CNI plugins ${PLUGINS.join(', ')} shipped in the node image`);
  log(`${node.ref}: fetching the CNI plugins from ${pluginsUrl}`);
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

/**
 * The Nodes once each has a podCIDR: kube-controller-manager allocates them after the cluster's create returns
 * (kind), and the bridge shape is configured from them. Polls the API; a timeout names the nodes without one.
 */
export async function nodesWithPodCIDRs(
  api: Pick<KubeApi, 'listNodes'>,
  {
    timeoutMs = 120_000,
    intervalMs = 250,
    signal,
  }: { timeoutMs?: number; intervalMs?: number; signal?: AbortSignal } = {},
): Promise<ClusterNode[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const nodes = await api.listNodes();
    const without = nodes.filter((n) => !n.podCIDR).map((n) => n.name);
    if (nodes.length > 0 && without.length === 0) return nodes;
    if (signal?.aborted) throw new HarnessError('ABORTED', "aborted while waiting for the nodes' podCIDRs");
    if (Date.now() > deadline)
      throw new HarnessError(
        'LAB_FAILED',
        `no podCIDR allocated to ${without.join(', ') || 'any node'} within ${timeoutMs} ms`,
        'kube-controller-manager allocates them (--allocate-node-cidrs with the cluster CIDR): see its log',
      );
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
