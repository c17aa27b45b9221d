// The `bridge` CNI shape on a real cluster, as the netns lab has it: a cni0 bridge per node with
// host-local IPAM on the node's podCIDR, and plain routes to the other nodes' podCIDRs.
// kindest/node images carry only some reference plugins: a node without all four gets them from a checked tarball
// (the kind build's node image ships all four).
import { HarnessError } from '../../../model/errors.ts';
import type { Target } from '../../../contract/provider.ts';
import type { ClusterNode, KubeApi } from '../common/kube-api.ts';
import type { CniPluginsSource } from '../common/real-options.ts';
import type { Polling } from '../common/provision-steps.ts';
import { bridgeConflistText } from '../../../dataplane/bridge-conflist.ts';

export const BRIDGE_CONFLIST = '/etc/cni/net.d/10-netrepro-bridge.conflist';

/** The reference plugins the bridge shape (and flannel, which delegates to bridge) calls. */
export const CNI_PLUGINS = ['bridge', 'host-local', 'loopback', 'portmap'] as const;
const PLUGINS_DIR = '/opt/cni/bin';
const TARBALL = '/tmp/netrepro-cni-plugins.tgz';

/**
 * The reference plugins in /opt/cni/bin: kept when the node has all four (the node image netrepro builds
 * ships them), else fetched from `source` and unpacked only once its sha256, computed in the node, matches.
 */
export async function installCniPlugins(
  node: Target,
  source: CniPluginsSource,
  log: (line: string) => void,
): Promise<void> {
  await node.exec(['mkdir', '-p', PLUGINS_DIR, '/etc/cni/net.d']);
  const executable = CNI_PLUGINS.flatMap((p, i) => [...(i ? ['-a'] : []), '-x', `${PLUGINS_DIR}/${p}`]);
  if ((await node.exec(['test', ...executable], { reject: false })).exitCode === 0) {
    log(`${node.ref}: CNI plugins ${CNI_PLUGINS.join(', ')} already in ${PLUGINS_DIR}; nothing fetched`);
    return;
  }
  log(`${node.ref}: fetching CNI plugins from ${source.url}`);
  await node.exec(['curl', '-fsSL', '--retry', '3', '-o', TARBALL, source.url], { timeoutMs: 120_000 });
  const sum = (await node.exec(['sha256sum', TARBALL])).stdout.trim().split(/\s+/)[0];
  if (sum !== source.sha256)
    throw new HarnessError(
      'LAB_FAILED',
      `${node.ref}: the CNI plugins tarball from ${source.url} has sha256 ${sum || '(none)'}, expected ${source.sha256}`,
      'NETREPRO_CNI_PLUGINS_SHA256 names the checksum of the tarball NETREPRO_CNI_PLUGINS_URL points at',
    );
  await node.exec(['tar', '-C', PLUGINS_DIR, '-xzf', TARBALL, ...CNI_PLUGINS.map((p) => `./${p}`)]);
}

/**
 * The cluster's Nodes once every one has a spec.podCIDR: kube-controller-manager allocates them a moment after
 * the Nodes register, which may be after the cluster's create command returned. Polls the API until then, at
 * most `timeoutMs`; LAB_FAILED names the nodes still without one, ABORTED when the run is.
 */
export async function waitPodCidrs(
  api: Pick<KubeApi, 'listNodes'>,
  signal: AbortSignal,
  { timeoutMs = 60_000, intervalMs = 250 }: Polling = {},
): Promise<ClusterNode[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (signal.aborted) throw new HarnessError('ABORTED', "aborted while waiting for the nodes' podCIDRs");
    const nodes = await api.listNodes();
    const without = nodes.filter((n) => !n.podCIDR).map((n) => n.name);
    if (nodes.length > 0 && without.length === 0) return nodes;
    if (Date.now() >= deadline)
      throw new HarnessError(
        'LAB_FAILED',
        `${without.length > 0 ? `node ${without.join(', ')} got no spec.podCIDR` : 'the cluster listed no node'} within ${timeoutMs / 1000} s`,
        "kube-controller-manager allocates podCIDRs with --allocate-node-cidrs and a --cluster-cidr the nodes' ranges fit in",
      );
    await pause(Math.min(intervalMs, Math.max(0, deadline - Date.now())), signal);
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
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
