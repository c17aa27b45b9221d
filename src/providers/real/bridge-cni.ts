// The `bridge` CNI shape on a real cluster, as the netns lab has it: a cni0 bridge per node with
// host-local IPAM on the node's podCIDR, and plain routes to the other nodes' podCIDRs.
// kind node images carry only some reference plugins, so the pinned release is fetched into each node.
import type { Target } from '../../contract/provider.ts';
import type { ClusterNode } from './kube-api.ts';

export const BRIDGE_CONFLIST = '/etc/cni/net.d/10-netrepro-bridge.conflist';

/** Where the conflist differs by cluster: containerd 1.4 (the local cluster) reads CNI 0.4.0 and keeps IPAM state per node. */
export interface BridgeConflistOptions {
  /** The CNI spec version the runtime reads. */
  cniVersion?: string;
  /** host-local's state directory (its default is one per host, which nodes sharing a host would share). */
  ipamDir?: string;
  /** The bridge and veth MTU (the runtime's default when unset). */
  mtu?: number;
}

export function bridgeConflist(podCIDR: string, o: BridgeConflistOptions = {}): string {
  const conf = {
    cniVersion: o.cniVersion ?? '1.0.0',
    name: 'netrepro-bridge',
    plugins: [
      {
        type: 'bridge',
        bridge: 'cni0',
        isGateway: true,
        // no masquerade: pod-to-pod traffic across nodes must keep the pod IPs, as in the incidents
        ipMasq: false,
        hairpinMode: true,
        ...(o.mtu ? { mtu: o.mtu } : {}),
        ipam: {
          type: 'host-local',
          ranges: [[{ subnet: podCIDR }]],
          routes: [{ dst: '0.0.0.0/0' }],
          ...(o.ipamDir ? { dataDir: o.ipamDir } : {}),
        },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
    ],
  };
  return `${JSON.stringify(conf, null, 2)}\n`;
}

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
  await node.exec(['tee', BRIDGE_CONFLIST], { input: bridgeConflist(requireCidr(self)) });
  for (const other of all) {
    if (other.name === self.name) continue;
    await node.exec(['ip', 'route', 'replace', requireCidr(other), 'via', other.internalIP]);
  }
}

function requireCidr(node: ClusterNode): string {
  if (!node.podCIDR) throw new Error(`node ${node.name} has no spec.podCIDR (is --allocate-node-cidrs on?)`);
  return node.podCIDR;
}
