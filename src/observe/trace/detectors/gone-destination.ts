// A packet sent on to an address nothing holds any more (a deleted pod's): the node still has a neighbour
// entry for it, so the frame goes to the address's last MAC, which no bridge port has; the bridge floods it and
// every pod that gets it drops it as not its own (OTHERHOST). What sent it there is the culprit: conntrack, when
// no nat rule saw the packet (an entry made for an earlier packet of the flow kept its DNAT to a backend since
// gone), or the nat rule that still DNATs to it; a client that sent to the address itself is told so.
import { samePacket } from '../path-packets.ts';
import {
  type Ctx,
  type Detector,
  type Drop,
  endpoint,
  type Found,
  type Rule,
  ruleText,
  showPacket,
} from './detector.ts';

function detect(ctx: Ctx): Found | undefined {
  const drops = ctx.events.filter(
    (e): e is Drop => e.kind === 'drop' && e.reason === 'OTHERHOST' && ctx.flow.concerns(e.packet),
  );
  const packet = drops[0]?.packet;
  if (!packet) return undefined;
  const gone = packet.dst;
  // the node that sent it on: its netfilter saw the packet with the gone address as destination
  const forwarded = ctx.events.find(
    (e): e is Rule => e.kind === 'rule' && samePacket(e.packet, packet) && e.oif !== undefined,
  );
  if (!forwarded) return undefined;
  const node = forwarded.node;
  const receivers = [...new Set(drops.filter((d) => samePacket(d.packet, packet)).map((d) => d.where))];
  const mac = drops[0]!.dmac;
  const flooded = `${node} sent ${showPacket(packet)} on to ${gone}, which nothing answers at any more: the frame went to ${mac ? `${mac}, ` : ''}the address's last known MAC, which no bridge port has, so the bridge flooded it and ${receivers.join(' and ')} dropped it as not theirs (OTHERHOST).`;
  if (gone === ctx.target.ip)
    return {
      culprit: { kind: 'kernel', node: `node/${node}`, where: `neighbour ${gone}`, text: `${gone} is held by nothing` },
      packet,
      reason: `${flooded} The client sent to ${gone} itself: no NAT chose it.`,
    };
  const dnat = ctx.events.find(
    (e): e is Rule =>
      e.kind === 'rule' &&
      e.node === node &&
      e.table === 'nat' &&
      /-j DNAT\b/.test(e.rule ?? '') &&
      new RegExp(`--to-destination ${gone.replaceAll('.', '\\.')}(:|$|\\s)`).test(e.rule ?? '') &&
      ctx.flow.outbound(e.packet) !== undefined,
  );
  if (dnat)
    return {
      culprit: { kind: 'rule', node, where: `${dnat.table}/${dnat.chain}`, text: ruleText(dnat) },
      packet: dnat.packet,
      reason: `${node}'s rule \`${ruleText(dnat)}\` (${dnat.table}/${dnat.chain}) still sends ${showPacket(dnat.packet)} to ${gone}. ${flooded}`,
    };
  const sent = { ...packet, dst: ctx.target.ip, dport: ctx.target.port };
  const to = endpoint(gone, packet.dport);
  return {
    culprit: {
      kind: 'conntrack',
      node,
      where: 'entry',
      text: `${packet.proto} ${endpoint(sent.src, sent.sport)} > ${endpoint(sent.dst, sent.dport)} DNAT to ${to}`,
    },
    packet: sent,
    reason: [
      `conntrack on ${node} sent ${showPacket(sent)} to ${to}, not a rule: no nat rule saw the packet, so an entry made for an earlier packet of the same flow (the client's port ${sent.sport} again) kept its DNAT to a backend that is gone. Each packet refreshes the entry's timeout: it outlives the backend as long as the client keeps sending.`,
      flooded,
    ].join(' '),
  };
}

export const goneDestination: Detector = { name: 'gone-destination', detect };
