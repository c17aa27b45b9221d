// Byte layouts of our BPF maps (clusters/netns/bpf/README.md), as bpftool `key hex .. value hex ..`
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
  return updates.map((u) => `map update pinned ${pinDir}/${u.map} key hex ${u.key.join(' ')} value hex ${u.value.join(' ')}`).join('\n') + '\n';
}

/** nr_masq_cfg: node IP, pod network and mask, network byte order. */
export function masqueradeConfig(nodeIp: string, podCidr: string): MapUpdate {
  const [net = '0.0.0.0', len = '32'] = podCidr.split('/');
  const mask = Number(len) === 0 ? 0 : (0xffffffff << (32 - Number(len))) >>> 0;
  return { map: 'nr_masq_cfg', key: hex([0, 0, 0, 0]), value: hex([...ip(nodeIp), ...ip(net), ...[24, 16, 8, 0].map((s) => (mask >>> s) & 255)]) };
}

/** nr_masq_ep: pod IP -> lxc ifindex (host order), pod MAC, lxc MAC: where a reverse-SNATed reply goes. */
export function masqueradeEndpoint(podIp: string, lxcIfindex: number, podMac: string, lxcMac: string): MapUpdate {
  return { map: 'nr_masq_ep', key: hex(ip(podIp)), value: hex([...le32(lxcIfindex), ...mac(podMac), ...mac(lxcMac)]) };
}

export interface LbService {
  vip: string;
  port: number;
  backends: { ip: string; port: number }[];
}

/**
 * Cilium's cilium_lb4_services_v2 (struct lb4_key / lb4_service: slot 0 holds the backend count,
 * slots 1..n the backend ids) and cilium_lb4_backends_v3 (struct lb4_backend). Proto 0 = any.
 */
export function socketLbEntries(services: readonly LbService[]): MapUpdate[] {
  const updates: MapUpdate[] = [];
  let nextId = 1;
  for (const svc of services) {
    const key = (slot: number) => hex([...ip(svc.vip), ...be16(svc.port), ...le16(slot), 0, 0, 0, 0]);
    updates.push({ map: 'cilium_lb4_services_v2', key: key(0), value: hex([...le32(0), ...le16(svc.backends.length), ...le16(1), 0, 0, 0, 0]) });
    svc.backends.forEach((b, i) => {
      const id = nextId++;
      updates.push({ map: 'cilium_lb4_services_v2', key: key(i + 1), value: hex([...le32(id), ...le16(0), ...le16(1), 0, 0, 0, 0]) });
      updates.push({ map: 'cilium_lb4_backends_v3', key: hex(le32(id)), value: hex([...ip(b.ip), ...be16(b.port), 6, 0, 0, 0, 0, 0]) });
    });
  }
  return updates;
}
