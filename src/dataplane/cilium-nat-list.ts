// One entry of a node's BPF SNAT table (cilium_snat_v4_external) as `cilium-dbg bpf nat list` prints it, so that
// the lab's map and a real agent's read the same. Upstream, at v1.20.0-pre.0: the key is printed by
// pkg/tuple/ipv4.go (TupleKey4Global.Dump, reverse=false) as `TCP IN 1.2.3.4:80 -> 5.6.7.8:4242 ` (`OUT` for an
// original tuple, flags 0), the value by pkg/maps/nat/ipv4.go (NatEntry4.Dump) as
// `XLATE_DST 10.244.1.5:4242 Created=12sec ago NeedsCT=1` (`XLATE_SRC` for an original tuple), one entry a line;
// without the agent's clock source `Created=? (raw N)` (pkg/maps/nat/nat.go, DumpEntriesWithTimeDiff).

export interface NatEntry {
  protocol: 'TCP' | 'UDP' | 'ICMP' | string;
  /** Reply tuple (TUPLE_F_IN): the key is what the reply carries, the value where it goes back to. */
  direction: 'IN' | 'OUT';
  source: string;
  sourcePort: number;
  destination: string;
  destinationPort: number;
  /** The address and port the packet is translated to. */
  xlate: string;
  xlatePort: number;
  /** As printed after `Created=`: `12sec ago`, or `? (raw N)`. */
  created: string;
  needsCt: number;
}

export function natEntryLine(e: NatEntry): string {
  const which = e.direction === 'IN' ? 'DST' : 'SRC';
  return `${e.protocol} ${e.direction} ${e.source}:${e.sourcePort} -> ${e.destination}:${e.destinationPort} XLATE_${which} ${e.xlate}:${e.xlatePort} Created=${e.created} NeedsCT=${e.needsCt}`;
}

const LINE =
  /^(\S+) (IN|OUT) (\d+\.\d+\.\d+\.\d+):(\d+) -> (\d+\.\d+\.\d+\.\d+):(\d+) (?:related )?(?:service )?XLATE_(?:DST|SRC) (\d+\.\d+\.\d+\.\d+):(\d+) Created=(.+) NeedsCT=(\d+)$/;

/** The entry a printed line holds; undefined for any other line (IPv6 entries, messages about maps not opened). */
export function parseNatEntry(line: string): NatEntry | undefined {
  const m = LINE.exec(line.trim());
  if (!m) return undefined;
  return {
    protocol: m[1]!,
    direction: m[2] as 'IN' | 'OUT',
    source: m[3]!,
    sourcePort: Number(m[4]),
    destination: m[5]!,
    destinationPort: Number(m[6]),
    xlate: m[7]!,
    xlatePort: Number(m[8]),
    created: m[9]!,
    needsCt: Number(m[10]),
  };
}
