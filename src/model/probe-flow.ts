// A probe's flow as each node sees it. The client's packets carry its address until a node's NAT rewrites
// them: a node that masquerades hands the next node a packet from its own address and port, and a drop
// there no longer names the client. conntrack's reply tuple says what that node sent on (read backwards:
// the reply's destination is the new source), so the flow is followed by tuples: the client's own, and
// each one a NAT made of it, learned from the conntrack events of every node it crossed.
import type { TraceEvent, TracePacket } from './trace-events.ts';

type Conntrack = Extract<TraceEvent, { kind: 'conntrack' }>;
type Tuple = Pick<TracePacket, 'proto' | 'src' | 'dst' | 'sport' | 'dport'>;

/** A tuple a node's NAT gave the client's packets: what `node` sent on, for the client's port `clientPort`. */
export interface TranslatedTuple {
  node: string;
  tuple: Tuple;
  clientPort?: number;
  /** The conntrack event it was read from, as `conntrack -E` printed it. */
  line: string;
  /** The tuple it was made from, when that was one a NAT made too (a node after the first). */
  from?: TranslatedTuple;
}

const same = (a: Tuple, b: Tuple) =>
  a.proto === b.proto && a.src === b.src && a.dst === b.dst && a.sport === b.sport && a.dport === b.dport;
const reversed = (t: Tuple): Tuple => ({ proto: t.proto, src: t.dst, dst: t.src, sport: t.dport, dport: t.sport });

export class ProbeFlow {
  private readonly learned: TranslatedTuple[] = [];

  constructor(readonly client: string) {}

  /** The flow of `client` with every tuple the conntrack events among `events` show a NAT made of it. */
  static of(client: string, events: readonly TraceEvent[]): ProbeFlow {
    const flow = new ProbeFlow(client);
    const conntrack = events.filter((e): e is Conntrack => e.kind === 'conntrack');
    // a node's entry is learned once the tuple it was made from is known, whatever order the nodes reported in
    while (conntrack.some((e) => flow.learn(e)));
    return flow;
  }

  /** The tuples a NAT made of the flow, in the order they were learned. */
  get translations(): readonly TranslatedTuple[] {
    return this.learned;
  }

  /** Learns what a node's NAT made of the flow from its conntrack entry: true when it is a tuple not known yet. */
  learn(e: Conntrack): boolean {
    const from = this.outbound(e.packet);
    if (!from) return false;
    const sent = reversed(e.reply);
    // a DNAT alone keeps the client's address as the source: the client's own tuple still marks the packets
    if (sent.src === this.client || this.learned.some((t) => same(t.tuple, sent))) return false;
    this.learned.push({ node: e.node, tuple: sent, clientPort: from.clientPort, line: e.line, from: from.translated });
    return true;
  }

  /**
   * The packet goes from the client's side of the flow: the client sent it, or it is a tuple a NAT made of
   * the client's packets. Returns the client's port it stands for (undefined for a port-less packet).
   */
  outbound(p: TracePacket): { clientPort?: number; translated?: TranslatedTuple } | undefined {
    if (p.src === this.client) return { clientPort: p.sport };
    const translated = this.learned.find((t) => same(t.tuple, p));
    return translated ? { clientPort: translated.clientPort, translated } : undefined;
  }

  /** The packet goes to the client's side of the flow: to the client, or the reply to a tuple a NAT made. */
  inbound(p: TracePacket): { clientPort?: number; translated?: TranslatedTuple } | undefined {
    if (p.dst === this.client) return { clientPort: p.dport };
    const translated = this.learned.find((t) => same(reversed(t.tuple), p));
    return translated ? { clientPort: translated.clientPort, translated } : undefined;
  }

  /** The packet is of the flow, either way, or an ICMP error about such a packet. */
  concerns(p: TracePacket): boolean {
    return (
      this.outbound(p) !== undefined ||
      this.inbound(p) !== undefined ||
      (p.inner !== undefined && this.concerns(p.inner))
    );
  }

  /** The client's port the packet (or the packet an ICMP error quotes) stands for. */
  clientPort(p: TracePacket): number | undefined {
    const flow = p.inner ?? p;
    return (this.outbound(flow) ?? this.inbound(flow))?.clientPort;
  }

  /** The NAT that made the tuple of the packet (or of the one an ICMP error quotes), when a NAT made it. */
  translationOf(p: TracePacket): TranslatedTuple | undefined {
    const flow = p.inner ?? p;
    return (this.outbound(flow) ?? this.inbound(flow))?.translated;
  }
}
