// The bridge shape's CNI network config list, one for the netns lab (which calls its plugins itself, as a
// kubelet's runtime does) and for real clusters (which write it to /etc/cni/net.d): the bridge plugin
// (cni0, host-local IPAM on the node's podCIDR) chained with portmap, which writes the pods' hostPorts
// from the runtime's `portMappings` capability argument.
import { DEFAULT_CNI_CHAIN, type CniChainPlugin } from '../model/primitives.ts';

/** Where the conflist differs by cluster: containerd 1.4 (the local cluster) reads CNI 0.4.0 and keeps IPAM state per node. */
export interface BridgeConflistOptions {
  /** The CNI spec version the runtime reads. */
  cniVersion?: string;
  /** host-local's state directory (its default is one per host, which nodes sharing a host would share). */
  ipamDir?: string;
  /** The bridge and veth MTU (the runtime's default when unset). */
  mtu?: number;
  /** The plugins in the order they run (default: bridge, portmap). */
  chain?: readonly CniChainPlugin[];
}

export interface CniConflist {
  cniVersion: string;
  name: string;
  plugins: ({ type: CniChainPlugin } & Record<string, unknown>)[];
}

export function bridgeConflist(podCIDR: string, o: BridgeConflistOptions = {}): CniConflist {
  const plugin = (type: CniChainPlugin) =>
    type === 'bridge'
      ? {
          type,
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
        }
      : // the runtime passes runtimeConfig.portMappings only to a plugin that declares the capability
        { type, capabilities: { portMappings: true } };
  return {
    cniVersion: o.cniVersion ?? '1.0.0',
    name: 'netrepro-bridge',
    plugins: (o.chain ?? DEFAULT_CNI_CHAIN).map(plugin),
  };
}

/** The conflist as a file in /etc/cni/net.d holds it (real clusters write it there). */
export function bridgeConflistText(podCIDR: string, o: BridgeConflistOptions = {}): string {
  return `${JSON.stringify(bridgeConflist(podCIDR, o), null, 2)}\n`;
}
