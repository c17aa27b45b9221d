// Byte layouts of our BPF maps (src/providers/netns/bpf/README.md), as bpftool `key hex .. value hex ..`
// words. Pure, so the layouts are unit-tested without a kernel.
const hex = (bytes: number[]) => bytes.map((b) => b.toString(16).padStart(2, '0'));
const ip = (address: string) => address.split('.').map(Number);
const be16 = (n: number) => [(n >> 8) & 255, n & 255];
const le16 = (n: number) => [n & 255, (n >> 8) & 255];
const le32 = (n: number) => [n & 255, (n >> 8) & 255, (n >> 16) & 255, (n >>> 24) & 255];
const mac = (address: string) => address.split(':').map((b) => parseInt(b, 16));

export interface MapUpdate {
  map: string;
  key: string[];
  value: string[];
}

/** One bpftool batch line per update: `map update pinned PATH key hex .. value hex ..`. */
export function batchLines(pinDir: string, updates: readonly MapUpdate[]): string {
  return `${updates.map((u) => `map update pinned ${pinDir}/${u.map} key hex ${u.key.join(' ')} value hex ${u.value.join(' ')}`).join('\n')}\n`;
}

const cidr = (c: string) => {
  const [net = '0.0.0.0', len = '32'] = c.split('/');
  const mask = Number(len) === 0 ? 0 : (0xffffffff << (32 - Number(len))) >>> 0;
  return [...ip(net), ...[24, 16, 8, 0].map((s) => (mask >>> s) & 255)];
};

/** Cilium's NAT port range (NODEPORT_PORT_MIN_NAT .. NODEPORT_PORT_MAX_NAT defaults). */
/** The drop tracer's filter (nr_drop_netns: a namespace inode, u32 -> 1), by map id: the loader owns the map, nothing is pinned. */
export function dropFilterLine(op: 'update' | 'delete', mapId: number, inum: number): string {
  return `map ${op} id ${mapId} key hex ${hex(le32(inum)).join(' ')}${op === 'update' ? ` value hex ${hex(le32(1)).join(' ')}` : ''}\n`;
}

export const SNAT_PORTS = { min: 32768, max: 65535 } as const;

/**
 * nr_masq_cfg: node IP, pod CIDR, native-routing CIDR (network byte order), then the SNAT port
 * range (host order). A native-routing CIDR of 0.0.0.0/0 would exclude everything: use the
 * cluster CIDR, as Cilium's ipv4-native-routing-cidr.
 */
export function masqueradeConfig(
  nodeIp: string,
  podCidr: string,
  nativeRoutingCidr: string,
  ports: { min: number; max: number } = SNAT_PORTS,
): MapUpdate {
  return {
    map: 'nr_masq_cfg',
    key: hex([0, 0, 0, 0]),
    value: hex([...ip(nodeIp), ...cidr(podCidr), ...cidr(nativeRoutingCidr), ...le16(ports.min), ...le16(ports.max)]),
  };
}

/** nr_masq_ep: pod IP -> lxc ifindex (host order), pod MAC, lxc MAC: where a reverse-SNATed reply goes. */
export function masqueradeEndpoint(podIp: string, lxcIfindex: number, podMac: string, lxcMac: string): MapUpdate {
  return { map: 'nr_masq_ep', key: hex(ip(podIp)), value: hex([...le32(lxcIfindex), ...mac(podMac), ...mac(lxcMac)]) };
}

export const IPPROTO = { TCP: 6, UDP: 17 } as const;

export interface LbService {
  vip: string;
  port: number;
  protocol: keyof typeof IPPROTO;
  backends: { ip: string; port: number }[];
}

/**
 * Cilium's cilium_lb4_services_v2 (struct lb4_key / lb4_service: slot 0 holds the backend count,
 * slots 1..n the backend ids), cilium_lb4_backends_v3 (struct lb4_backend, with the port's
 * protocol) and cilium_lb4_reverse_nat (rev_nat_index -> frontend). Each frontend (service
 * address, port, protocol) gets its own rev_nat_index, 1, 2, ... in order, as the agent numbers
 * them; keys carry the protocol (service protocol differentiation). Flags stay 0: Cilium sets
 * SVC_FLAG_ROUTABLE on a ClusterIP only with bpf-lb-external-clusterip.
 */
export function socketLbEntries(services: readonly LbService[]): MapUpdate[] {
  const updates: MapUpdate[] = [];
  let nextId = 1;
  services.forEach((svc, n) => {
    const revNat = n + 1;
    const proto = IPPROTO[svc.protocol];
    const key = (slot: number) => hex([...ip(svc.vip), ...be16(svc.port), ...le16(slot), proto, 0, 0, 0]);
    updates.push({
      map: 'cilium_lb4_services_v2',
      key: key(0),
      value: hex([...le32(0), ...le16(svc.backends.length), ...le16(revNat), 0, 0, 0, 0]),
    });
    updates.push({
      map: 'cilium_lb4_reverse_nat',
      key: hex(le16(revNat)),
      value: hex([...ip(svc.vip), ...be16(svc.port)]),
    });
    svc.backends.forEach((b, i) => {
      const id = nextId++;
      updates.push({
        map: 'cilium_lb4_services_v2',
        key: key(i + 1),
        value: hex([...le32(id), ...le16(0), ...le16(revNat), 0, 0, 0, 0]),
      });
      updates.push({
        map: 'cilium_lb4_backends_v3',
        key: hex(le32(id)),
        value: hex([...ip(b.ip), ...be16(b.port), proto, 0, 0, 0, 0, 0]),
      });
    });
  });
  return updates;
}
