// The network joining the nodes, as both embedded providers build it (netns and local): a bridge in the
// run's fabric namespace, node i at .(2+i), hosts outside the cluster at .(100+i), and the fabric's own
// address .1 as every node's gateway. A real node has a default route, so a packet for an address no other
// route covers (a ClusterIP no DNAT rewrote) is routed on and meets kube-proxy's filter rules (a REJECT,
// a DROP) instead of an ICMP net-unreachable from the node's own routing. The fabric forwards nothing:
// what a node sends it for an address outside the lab is dropped there and never leaves the lab.

/** The nodes' network (the first three octets). */
export const FABRIC_NET = '172.18.0';
/** The fabric namespace's own address on the nodes' network: the nodes' default gateway. */
export const FABRIC_GATEWAY = `${FABRIC_NET}.1`;

/** The node's default gateway from `nodes[].defaultRoute`, or undefined for `none`; `host/NAME` through `hostAddress`. */
export function defaultGateway(defaultRoute: string, hostAddress: (ref: string) => string): string | undefined {
  if (defaultRoute === 'none') return undefined;
  return defaultRoute === 'fabric' ? FABRIC_GATEWAY : hostAddress(defaultRoute);
}

/** Node `name`'s address on the nodes' network: its own `address`, or .(2+i) for the i-th node of the topology. */
export function nodeAddress(nodes: readonly { name: string; address?: string }[], name: string): string | undefined {
  const i = nodes.findIndex((n) => n.name === name);
  return i < 0 ? undefined : (nodes[i]!.address ?? `${FABRIC_NET}.${i + 2}`);
}
