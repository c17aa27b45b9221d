// What flannel's vxlan backend programs on each node, as `ip -batch` lines: its VTEP flannel.1
// (VNI 1, UDP 8472, no learning) addressed <podCIDR network>/32, and for every other node a route
// to that node's pod subnet via its VTEP address (onlink), a permanent neighbour entry for that
// address with the remote VTEP's MAC, and an FDB entry sending that MAC to the remote node's IP.
// Pure: unit-tested without a lab.

export interface FlannelNode {
  name: string;
  podCIDR: string;
  /** The node's IP on eth0 (VTEP source address). */
  nodeIP: string;
  /** flannel.1's MAC (flannel announces it in the node's annotation flannel.alpha.coreos.com/backend-data). */
  vtepMac: string;
}

export const FLANNEL_VNI = 1;
export const FLANNEL_PORT = 8472;
/** VXLAN overhead: a pod MTU of 1450 on a 1500 node network, as flannel configures it. */
export const FLANNEL_MTU = 1450;

/** A stable locally administered MAC per node index (flannel picks a random one and publishes it). */
export function vtepMac(index: number): string {
  return `0e:6e:72:00:${((index >> 8) & 0xff).toString(16).padStart(2, '0')}:${(index & 0xff).toString(16).padStart(2, '0')}`;
}

export function networkAddress(cidr: string): string {
  const [ip = '', len = '32'] = cidr.split('/');
  const n = ip.split('.').reduce((a, o) => a * 256 + Number(o), 0);
  const mask = Number(len) === 0 ? 0 : (0xffffffff << (32 - Number(len))) >>> 0;
  const net = (n & mask) >>> 0;
  return [24, 16, 8, 0].map((s) => (net >>> s) & 0xff).join('.');
}

/** The VTEP device, created with its MAC and address (run first on every node). */
export function flannelDevice(node: FlannelNode): string[] {
  return [
    `link add flannel.1 type vxlan id ${FLANNEL_VNI} dstport ${FLANNEL_PORT} local ${node.nodeIP} dev eth0 nolearning`,
    `link set flannel.1 address ${node.vtepMac} mtu ${FLANNEL_MTU}`,
    `addr add ${networkAddress(node.podCIDR)}/32 dev flannel.1`,
    'link set flannel.1 up',
  ];
}

/**
 * The per-peer entries flanneld writes on `node` when it learns of every other node (run once all
 * devices are up): routes and neighbours for `ip -batch`, FDB entries for `bridge -batch`. `again`: as a
 * restarted flanneld writes them for every lease, over what is still there (replace, never a duplicate).
 */
export function flannelPeerEntries(
  node: FlannelNode,
  all: readonly FlannelNode[],
  again = false,
): { ip: string[]; bridge: string[] } {
  const peers = all.filter((peer) => peer.name !== node.name);
  const [add, append] = again ? ['replace', 'replace'] : ['add', 'append'];
  return {
    ip: peers.flatMap((peer) => {
      const vtep = networkAddress(peer.podCIDR);
      return [
        `route ${add} ${peer.podCIDR} via ${vtep} dev flannel.1 onlink`,
        `neigh ${add} ${vtep} lladdr ${peer.vtepMac} dev flannel.1 nud permanent`,
      ];
    }),
    bridge: peers.map((peer) => `fdb ${append} ${peer.vtepMac} dev flannel.1 dst ${peer.nodeIP}`),
  };
}
