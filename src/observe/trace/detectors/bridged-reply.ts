// A reply reached the client from the backend's own address without passing the node's netfilter: bridged
// with bridge-nf-call-iptables off, so never reverse-NATed.
import type { TracePacket } from '../../../model/trace-events.ts';
import {
  type Conntrack,
  ctState,
  type Ctx,
  type Detector,
  type Drop,
  endpoint,
  type Found,
  type Rule,
} from './detector.ts';

/** A reply reached the client from the backend's own address without passing the node's netfilter (bridged). */
function detect(ctx: Ctx): Found | undefined {
  // an answered probe's reply was reverse-NATed, as its outcome says; a client on a node captures on every
  // interface (-i any) and sees the reply on cni0 before its own reverse NAT too
  if (ctx.probe.observed === 'ok') return undefined;
  const { packet, socketDrop } = unNatedReply(ctx);
  if (!packet) return undefined;
  const bridge = bridgeOf(ctx, packet);
  const throughNetfilter = ctx.events.some(
    (e) => e.kind === 'rule' && e.packet.src === packet.src && e.packet.dst === ctx.client,
  );
  if (throughNetfilter) return undefined;
  const what = packet.proto === 'udp' ? 'reply' : 'SYN-ACK';
  const from = endpoint(packet.src, packet.sport);
  const sentences = [bridgedSentence(ctx, packet, bridge)];
  if (bridge.ct)
    sentences.push(
      `conntrack on ${bridge.ct.node} still shows the connection ${ctState(bridge.ct)}: it never saw the ${what}.`,
    );
  const rst = ctx.packets.find((p) => p.src === ctx.client && p.dst === packet.src && p.flags?.startsWith('R'));
  if (rst) sentences.push(`The client answered RST to ${from}, a peer it never contacted.`);
  if (packet.proto === 'udp' && socketDrop) return socketCulprit(ctx, { packet, socketDrop }, sentences);
  if (packet.proto === 'udp')
    sentences.push(
      `The client's resolver socket is not connected, so it accepted the reply and named its wrong source.`,
    );
  return {
    culprit: {
      kind: 'kernel',
      node: bridge.node,
      where: bridge.off ? `bridge (net.bridge.bridge-nf-call-iptables=0)` : 'bridge (no netfilter on the reply path)',
      text: `${what} ${from} > ${endpoint(ctx.client, packet.dport)} bridged past conntrack: no reverse NAT`,
    },
    packet,
    reason: sentences.join(' '),
  };
}

/** The reply from an address the client never sent to: as the client captured it, else as a pod's socket dropped it. */
interface UnNatedReply {
  packet: TracePacket | undefined;
  /** The drop of such a reply in a pod (its connected UDP socket did not match it), if traced. */
  socketDrop: Drop | undefined;
}

export function unNatedReply(ctx: Ctx): UnNatedReply {
  const reply =
    ctx.packets.find(
      (p) =>
        p.dst === ctx.client &&
        (p.src !== ctx.target.ip || p.sport !== ctx.target.port) &&
        (p.proto === 'udp' || p.flags?.startsWith('S.')),
    ) ?? undefined;
  const socketDrop = ctx.events.find(
    (e): e is Drop =>
      e.kind === 'drop' &&
      e.where.startsWith('pod/') &&
      e.packet.dst === ctx.client &&
      (e.packet.src !== ctx.target.ip || e.packet.sport !== ctx.target.port),
  );
  const packet: TracePacket | undefined = reply
    ? {
        proto: reply.proto,
        src: reply.src,
        dst: reply.dst,
        sport: reply.sport,
        dport: reply.dport,
        flags: reply.flags === 'S.' ? 'SYN ACK' : reply.flags,
      }
    : socketDrop?.packet;
  return { packet, socketDrop };
}

/** Where the reply was bridged: the node whose conntrack holds the flow (else the first with a setting read), and whether bridge-nf-call-iptables was off there. */
interface BridgeSeen {
  ct: Conntrack | undefined;
  node: string;
  off: boolean;
}

function bridgeOf(ctx: Ctx, packet: TracePacket): BridgeSeen {
  const ct = ctx.events.find(
    (e): e is Conntrack =>
      e.kind === 'conntrack' &&
      e.packet.src === ctx.client &&
      e.packet.dst === ctx.target.ip &&
      e.reply.src === packet.src,
  );
  const node = ct?.node ?? ctx.facts.find((f) => f.kind === 'setting')?.node ?? '';
  const off = ctx.facts.some(
    (f) =>
      f.kind === 'setting' && f.node === node && f.name === 'net.bridge.bridge-nf-call-iptables' && f.value === '0',
  );
  return { ct, node, off };
}

/** What was DNATed where, and that the reply was bridged past the nat table. */
function bridgedSentence(ctx: Ctx, packet: TracePacket, bridge: BridgeSeen): string {
  const dnat = ctx.events.find(
    (e): e is Rule => e.kind === 'rule' && e.table === 'nat' && /-j DNAT/.test(e.rule ?? ''),
  );
  const what = packet.proto === 'udp' ? 'reply' : 'SYN-ACK';
  const from = endpoint(packet.src, packet.sport);
  return `${dnat ? `The ${packet.proto === 'udp' ? 'query' : 'SYN'} to ${endpoint(ctx.target.ip, ctx.target.port)} was DNATed on ${dnat.node} by ${dnat.table}/${dnat.chain} to ${from}; the` : 'The'} ${what} from ${from} was bridged ${bridge.off ? `on ${bridge.node} with net.bridge.bridge-nf-call-iptables=0 ` : ''}without passing the nat table, so it was never reverse-NATed and kept the pod IP as its source.`;
}

/** A connected UDP socket dropped the reply: the socket is the culprit. */
function socketCulprit(
  ctx: Ctx,
  { packet, socketDrop }: { packet: TracePacket; socketDrop: Drop },
  sentences: string[],
): Found {
  const target = endpoint(ctx.target.ip, ctx.target.port);
  return {
    culprit: {
      kind: 'socket',
      node: socketDrop.where,
      where: `udp socket connected to ${target}`,
      text: `${socketDrop.reason} at ${socketDrop.location} (${socketDrop.iface})`,
    },
    packet,
    reason: [
      ...sentences,
      `The client's UDP socket, connected to ${target}, did not match the reply, so the kernel dropped it (${socketDrop.reason} in ${socketDrop.location}).`,
    ].join(' '),
  };
}

export const bridgedReply: Detector = { name: 'bridged-reply', detect };
