// The bridge dropped a frame it would have had to send back out the port it came in on (hairpin off),
// read from the node's state at the drop.
import { type Ctx, type Detector, type Drop, endpoint, type Found, type Rule, showPacket } from './detector.ts';

/** A bridge port with hairpin off got a frame back for the MAC behind itself: the bridge dropped it (kernel state read at the drop). */
function detect(ctx: Ctx): Found | undefined {
  const drop = ctx.events.find(
    (e): e is Drop & { cause: { kind: 'hairpin-off' } } =>
      e.kind === 'drop' && e.cause?.kind === 'hairpin-off' && ctx.flow.concerns(e.packet),
  );
  if (!drop) return undefined;
  const { bridge, port, mac } = drop.cause;
  const node = drop.where.replace(/^node\//, '');
  const dnat = ctx.events.find(
    (e): e is Rule => e.kind === 'rule' && e.table === 'nat' && /-j DNAT/.test(e.rule ?? ''),
  );
  const to = endpoint(drop.packet.dst, drop.packet.dport);
  const sentences = [
    `${dnat ? `The SYN to ${endpoint(ctx.target.ip, ctx.target.port)} was DNATed on ${dnat.node} by ${dnat.table}/${dnat.chain} to ${to}` : `The SYN was sent on to ${to}`}${drop.packet.dst === ctx.client ? ', the client itself' : ''}.`,
    `The bridge ${bridge} would have to send it back out ${port}, the port it came in on: its destination ${mac} is behind that port in ${bridge}'s FDB, and the port's hairpin mode is off, so ${node} dropped it (${drop.reason} at ${drop.location}).`,
    'Every retransmission meets the same port: the connection hangs.',
  ];
  return {
    culprit: {
      kind: 'kernel',
      node: drop.where,
      where: `${port} on bridge ${bridge} (hairpin off)`,
      text: `${showPacket(drop.packet)} not sent back out its ingress port ${port}`,
    },
    packet: drop.packet,
    reason: sentences.join(' '),
  };
}

export const hairpinDrop: Detector = { name: 'hairpin-drop', detect };
