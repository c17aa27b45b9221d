// Any other drop the kernel reported for the flow, with its reason and where: the last detector tried.
import { type Ctx, type Detector, type Drop, type Found, showPacket } from './detector.ts';

/**
 * Drops that are no packet's fate: a capture socket (tcpdump) that could not keep up frees its clone with
 * PACKET_SOCK_ERROR while the packet itself goes on; a socket that closes frees what it had queued and
 * nobody read (QUEUE_PURGE: the ICMP error curl already acted on, say), after the exchange was decided.
 */
const NOT_A_FATE = new Set(['PACKET_SOCK_ERROR', 'QUEUE_PURGE']);

/** Any other drop the kernel reported for this flow, with its reason. */
function detect(ctx: Ctx): Found | undefined {
  const drop = ctx.events.find(
    (e): e is Drop =>
      e.kind === 'drop' && e.reason !== 'NOT_SPECIFIED' && !NOT_A_FATE.has(e.reason) && ctx.flow.concerns(e.packet),
  );
  if (!drop) return undefined;
  return {
    culprit: {
      kind: drop.reason === 'NO_SOCKET' ? 'socket' : 'kernel',
      node: drop.where,
      where: drop.location,
      text: `${drop.reason} on ${drop.iface}`,
    },
    packet: drop.packet,
    reason: `The kernel in ${drop.where} dropped ${showPacket(drop.packet)}: ${drop.reason} in ${drop.location} (${drop.iface}${drop.cause?.kind === 'neighbour' ? `: no ARP answer for ${drop.cause.neighbour}` : ''}).`,
  };
}

export const kernelDrop: Detector = { name: 'kernel-drop', detect };
