// The lab's SNAT map (masquerade.c: Cilium's struct ipv4_ct_tuple keys, struct ipv4_nat_entry values), dumped
// by `bpftool -j` as raw bytes, printed one entry a line as `cilium-dbg bpf nat list` prints Cilium's
// (src/dataplane/cilium-nat-list.ts): what an `snat` check reads on a real node too.
import { natEntryLine } from '../../dataplane/cilium-nat-list.ts';

/** Where the lab pins its SNAT map, under the node's private bpffs (cilium-datapath.ts). */
export const LAB_SNAT_MAP = 'masq-maps/cilium_snat_v4_external';

/** u8proto's names (pkg/u8proto/u8proto.go); any other protocol number is printed as a number. */
const PROTOCOLS: Record<number, string> = { 1: 'ICMP', 6: 'TCP', 17: 'UDP', 58: 'ICMPv6', 132: 'SCTP' };

interface DumpedEntry {
  key: string[];
  value: string[];
}

const ipv4 = (b: number[], at: number) => b.slice(at, at + 4).join('.');
const be16 = (b: number[], at: number) => (b[at]! << 8) | b[at + 1]!;
const le64 = (b: number[], at: number) => b.slice(at, at + 8).reduceRight((n, byte) => n * 256n + BigInt(byte), 0n);

/** `bpftool -j map dump` of the lab's SNAT map as entry lines; bytes in the key's and value's C layout. */
export function labNatEntries(stdout: string): string[] {
  const dumped = JSON.parse(stdout || '[]') as DumpedEntry[];
  return dumped.map(({ key, value }) => {
    const k = key.map((x) => Number.parseInt(x, 16));
    const v = value.map((x) => Number.parseInt(x, 16));
    // struct ipv4_ct_tuple: daddr, saddr, dport, sport, nexthdr, flags (TUPLE_F_IN = 1)
    // struct ipv4_nat_entry: created, needs_ct, pad1, pad2, to_saddr (to_daddr), to_sport (to_dport)
    return natEntryLine({
      protocol: PROTOCOLS[k[12]!] ?? String(k[12]),
      direction: (k[13]! & 1) !== 0 ? 'IN' : 'OUT',
      source: ipv4(k, 4),
      sourcePort: be16(k, 10),
      destination: ipv4(k, 0),
      destinationPort: be16(k, 8),
      xlate: ipv4(v, 32),
      xlatePort: be16(v, 36),
      created: `? (raw ${le64(v, 0)})`,
      needsCt: Number(le64(v, 8)),
    });
  });
}
