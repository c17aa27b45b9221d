// A probe ended at a drop the trace attributed (a DROP rule, or a kernel reason that repeats for every
// retransmission): the verdict is the timeout that would follow, called at once and saying why.
import { connectAnswer, type Classified, type Endpoint } from '../probes/classify.ts';
import { PRINT_LAG_MS, type Packet, type PacketView } from '../probes/packet-watch.ts';
import type { DropCause, TraceEvent, TracePacket } from '../../model/trace-events.ts';

type Drop = Extract<TraceEvent, { kind: 'rule' | 'drop' }>;

const ICMP_ERRORS: Record<string, string> = {
  '3/4': 'frag-needed',
  '3/1': 'host-unreachable',
  '3/3': 'port-unreachable',
  '11/0': 'ttl-exceeded',
};

/** `tcp 10.0.0.1:80 > 10.0.0.2:4000 [SYN]`; an ICMP error with what it is about: `icmp 10.244.2.1 > 10.244.2.2 [frag-needed mtu 1400, about tcp ...]`. */
export function packetWords(p: TracePacket): string {
  const icmp = p.icmp
    ? `${ICMP_ERRORS[`${p.icmp.type}/${p.icmp.code}`] ?? `type ${p.icmp.type}/${p.icmp.code}`}${p.icmp.mtu ? ` mtu ${p.icmp.mtu}` : ''}`
    : undefined;
  const about = p.inner ? `about ${packetWords(p.inner)}` : undefined;
  const bracket = [p.flags, icmp, about].filter(Boolean).join(', ');
  return `${p.proto} ${p.src}${p.sport !== undefined ? `:${p.sport}` : ''} > ${p.dst}${p.dport !== undefined ? `:${p.dport}` : ''}${bracket ? ` [${bracket}]` : ''}`;
}

/** One line: `filter/KUBE-FORWARD DROP on node-a (-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP)`. */
export function describeDrop(drop: Drop): string {
  const packet = packetWords(drop.packet);
  if (drop.kind === 'rule')
    return `${packet} dropped by ${drop.table}/${drop.chain} on node/${drop.node}${drop.rule ? ` (${drop.rule.replace(/^-4 -t \S+ /, '')})` : ''} at ${drop.at} ms`;
  const cause = drop.cause;
  if (cause?.kind === 'hairpin-off')
    return `${packet} dropped in ${drop.where} by the bridge ${cause.bridge}: ${hairpinWords(cause)} (${drop.reason} at ${drop.location}) at ${drop.at} ms`;
  return `${packet} dropped in ${drop.where} (${drop.reason} at ${drop.location}, ${drop.iface}) at ${drop.at} ms`;
}

/** A drop the trace attributed to a probe's own packet: the packet, and the drop in words (as a string). */
export class AttributedDrop {
  readonly packet: TracePacket;
  private readonly words: string;
  constructor(drop: Drop) {
    this.packet = drop.packet;
    this.words = describeDrop(drop);
  }
  toString(): string {
    return this.words;
  }
}

/** Why a bridge dropped a frame with hairpin off, from its FDB and port flags. */
function hairpinWords(cause: Extract<DropCause, { kind: 'hairpin-off' }>): string {
  return `its destination ${cause.mac} is behind ${cause.port}, the port it came in on, and that port's hairpin mode is off`;
}

/**
 * A TCP probe stopped at a drop the trace attributed on a node: tcpdump on the client may not have printed
 * its side of the connection yet. Waits (at most PRINT_LAG_MS) until the capture shows how far it got: the SYN
 * that was dropped, the SYN-ACK the client got or its packets after the handshake, or an answer instead
 * (RST, ICMP: `connectAnswer`), which then decides over the drop.
 */
export function captureAtDrop(watch: PacketView, client: string, drop: AttributedDrop): Promise<void> {
  const synDropped = drop.packet.flags === 'SYN';
  const shown = (p: Packet) =>
    p.proto === 'tcp' &&
    (synDropped
      ? p.src === client
      : (p.dst === client && p.flags?.startsWith('S.') === true) || (p.src === client && p.flags !== 'S'));
  return watch.until((seen) => seen.some(shown) || connectAnswer(seen, client) !== undefined, PRINT_LAG_MS);
}

/** Whether the client completed the handshake with the endpoint, from its own interface. */
export function handshakeSeen(packets: readonly Packet[], client: string, endpoint: Endpoint): boolean {
  return packets.some(
    (p) => p.dst === client && p.src === endpoint.ip && p.sport === endpoint.port && p.flags?.startsWith('S.') === true,
  );
}

export function dropVerdict(
  packets: readonly Packet[],
  client: string,
  endpoint: Endpoint,
  why: string,
): { classified: Classified; connected: boolean } {
  const connected = handshakeSeen(packets, client, endpoint);
  return {
    connected,
    classified: {
      outcome: 'timeout',
      reason: `${connected ? 'connected, then ' : ''}${why}; verdict called at the drop, which repeats for every retransmission`,
    },
  };
}

/** A probe's channel from its trace: the first drop attributed to the probe's own packets, and a signal that stops the probe there. */
export class DropWatch {
  private readonly controller = new AbortController();
  /** Aborted at the drop: stops the probe's command early. */
  readonly signal: AbortSignal = this.controller.signal;
  private first: AttributedDrop | undefined;

  /** The attributed drop, once there is one. */
  get drop(): AttributedDrop | undefined {
    return this.first;
  }

  /** Records the first drop and stops the probe; later ones change nothing. */
  report(drop: Drop): void {
    if (this.first) return;
    this.first = new AttributedDrop(drop);
    this.controller.abort();
  }
}
