// Pure parsers for what the trace tools print, one line at a time: xtables-monitor --trace (nf_tables
// backend), conntrack -E, and our drop tracer (agent/drop-trace.c). Unit-tested on recorded text.
import type { TraceEvent, TracePacket } from '../../../model/trace-events.ts';

type RuleEvent = Extract<TraceEvent, { kind: 'rule' }>;
type DropEvent = Extract<TraceEvent, { kind: 'drop' }>;
type ConntrackEvent = Extract<TraceEvent, { kind: 'conntrack' }>;

const fieldPatterns = new Map<string, RegExp>(); // compiled once per name: these run for every traced line
const field = (line: string, name: string) => {
  let pattern = fieldPatterns.get(name);
  if (!pattern) fieldPatterns.set(name, (pattern = new RegExp(`(?:^|\\s)${name}=(\\S+)`)));
  return pattern.exec(line)?.[1];
};
const TCP_FLAGS = ['SYN', 'ACK', 'FIN', 'RST', 'PSH', 'URG'];

/** `PACKET: 2 4e9da03f IN=vxb ... SRC=10.250.0.1 DST=10.250.0.2 ... SPORT=44586 DPORT=80 SYN` */
export function parsePacketLine(
  line: string,
): { id: string; iif?: string; oif?: string; packet: TracePacket } | undefined {
  const m = /^\s*PACKET: \d+ ([0-9a-f]+) (.*)$/.exec(line);
  if (!m) return undefined;
  const rest = m[2]!;
  const src = field(rest, 'SRC');
  const dst = field(rest, 'DST');
  if (!src || !dst) return undefined;
  const words = rest.split(/\s+/);
  const flags = words.filter((w) => TCP_FLAGS.includes(w));
  const sport = field(rest, 'SPORT');
  const dport = field(rest, 'DPORT');
  const proto = flags.length
    ? 'tcp'
    : sport
      ? 'udp'
      : field(rest, 'TYPE')
        ? 'icmp'
        : (field(rest, 'PROTO')?.toLowerCase() ?? 'ip');
  return {
    id: m[1]!,
    iif: field(rest, 'IN'),
    oif: field(rest, 'OUT'),
    packet: {
      proto,
      src,
      dst,
      sport: sport ? Number(sport) : undefined,
      dport: dport ? Number(dport) : undefined,
      flags: flags.length ? flags.join(' ') : undefined,
    },
  };
}

const TRACE =
  /^\s*TRACE: \d+ ([0-9a-f]+) ([^:\s]+):([^:\s]+):(rule|policy|return):(?:(0x[0-9a-f]+):)?([A-Z]+)(?::(\S+))?\s*(.*)$/;

/** Keeps the last PACKET line per trace id, so each TRACE line becomes a rule event with its packet. */
export class XtablesTraceParser {
  private readonly packets = new Map<string, ReturnType<typeof parsePacketLine>>();

  constructor(private readonly node: string) {}

  feed(line: string, at: number): RuleEvent | undefined {
    const packet = parsePacketLine(line);
    if (packet) {
      this.packets.set(packet.id, packet);
      if (this.packets.size > 4096) this.packets.delete(this.packets.keys().next().value!);
      return undefined;
    }
    const m = TRACE.exec(line);
    if (!m) return undefined;
    const [, id, table, chain, kind, , verdict, target, text] = m;
    const seen = this.packets.get(id!);
    if (!seen) return undefined;
    return {
      kind: 'rule',
      at,
      node: this.node,
      id: id!,
      table: table!,
      chain: chain!,
      verdict: kind === 'policy' ? `policy ${verdict}` : kind === 'return' ? 'RETURN' : verdict!,
      target,
      rule: text?.trim() || undefined,
      iif: seen.iif,
      oif: seen.oif,
      packet: seen.packet,
    };
  }
}

/**
 * `drop ns=4026532246 reason=NETFILTER_DROP loc=nft_do_chain+0x3e8 if=vxb proto=6 10.250.0.1:50926 > 10.250.0.2:80 flags=0x02`;
 * an ICMP error adds its type/code, the MTU of a fragmentation-needed and the header it quotes:
 * `... proto=1 10.244.2.1:0 > 10.244.2.2:0 flags=0x00 icmp=3/4 mtu=1400 inner=6 10.244.2.2:8080 > 10.244.1.2:36238`;
 * identical drops that came in one poll of the tracer are one line, counted at its end: `... flags=0x10 repeat=37`;
 * a frame with a MAC header adds its Ethernet destination (before any repeat=): `... dmac=0a:58:0a:f4:01:02`
 */
export function parseDropLine(
  line: string,
  at: number,
  whereByNetns: (inum: number) => string | undefined,
): DropEvent | undefined {
  const m =
    /^drop ns=(\d+) reason=(\S+) loc=(\S+) if=(\S+) proto=(\d+) ([\d.]+):(\d+) > ([\d.]+):(\d+) flags=0x([0-9a-f]+)/.exec(
      line,
    );
  if (!m) return undefined;
  const [, ns, reason, location, iface, proto, src, sport, dst, dport, flags] = m;
  const where = whereByNetns(Number(ns));
  if (!where) return undefined;
  const p = Number(proto);
  const bits = Number.parseInt(flags!, 16);
  const names = (['FIN', 'SYN', 'RST', 'PSH', 'ACK', 'URG'] as const).filter((_, i) => bits & (1 << i));
  const icmp = / icmp=(\d+)\/(\d+)(?: mtu=(\d+))?/.exec(line);
  const inner = / inner=(\d+) ([\d.]+):(\d+) > ([\d.]+):(\d+)/.exec(line);
  const repeat = / repeat=(\d+)/.exec(line);
  const dmac = / dmac=([0-9a-f:]{17})/.exec(line)?.[1];
  return {
    kind: 'drop',
    at,
    where,
    reason: reason!,
    location: location!,
    iface: iface!,
    packet: {
      proto: p === 6 ? 'tcp' : p === 17 ? 'udp' : p === 1 ? 'icmp' : String(p),
      src: src!,
      dst: dst!,
      sport: p === 6 || p === 17 ? Number(sport) : undefined,
      dport: p === 6 || p === 17 ? Number(dport) : undefined,
      flags: p === 6 ? names.join(' ') : undefined,
      ...(icmp
        ? { icmp: { type: Number(icmp[1]), code: Number(icmp[2]), ...(icmp[3] ? { mtu: Number(icmp[3]) } : {}) } }
        : {}),
      ...(inner ? { inner: l4Packet(Number(inner[1]), inner[2]!, Number(inner[3]), inner[4]!, Number(inner[5])) } : {}),
    },
    ...(repeat ? { repeat: Number(repeat[1]) } : {}),
    ...(dmac ? { dmac } : {}),
  };
}

function l4Packet(proto: number, src: string, sport: number, dst: string, dport: number): TracePacket {
  const ports = proto === 6 || proto === 17;
  return {
    proto: proto === 6 ? 'tcp' : proto === 17 ? 'udp' : proto === 1 ? 'icmp' : String(proto),
    src,
    dst,
    sport: ports ? sport : undefined,
    dport: ports ? dport : undefined,
  };
}

/** `    [NEW] tcp      6 120 SYN_SENT src=10.244.1.2 dst=10.96.0.20 sport=40000 dport=80 [UNREPLIED] src=10.244.1.3 dst=10.244.1.2 sport=8080 dport=40000` */
export function parseConntrackLine(line: string, at: number, node: string): ConntrackEvent | undefined {
  const m = /^\s*\[(NEW|UPDATE|DESTROY)\]\s+(\w+)\s+\d+\s+(?:\d+\s+)?([A-Z_]+\s+)?(src=.*)$/.exec(line);
  if (!m) return undefined;
  const [, event, proto, state, tuples] = m;
  const parts = tuples!.split(/(?=src=)/).map((p) => p.trim());
  const tuple = (text = ''): TracePacket => ({
    proto: proto!,
    src: field(text, 'src') ?? '',
    dst: field(text, 'dst') ?? '',
    sport: field(text, 'sport') ? Number(field(text, 'sport')) : undefined,
    dport: field(text, 'dport') ? Number(field(text, 'dport')) : undefined,
  });
  return {
    kind: 'conntrack',
    at,
    node,
    event: event!,
    state: state?.trim() || undefined,
    packet: tuple(parts[0]),
    reply: tuple(parts[1]),
    unreplied: line.includes('[UNREPLIED]'),
    line: line.trim(),
  };
}
