// A netfilter rule dropped or rejected a packet of the client's flow: the rule as iptables-save prints it,
// and for an INVALID drop, why conntrack could not place the packet.
import type { TraceFact } from '../../../model/trace-events.ts';
import { concernsClient } from '../../../model/trace-events.ts';
import {
  ctState,
  type Ctx,
  type Detector,
  type Drop,
  endpoint,
  type Found,
  lastConntrack,
  type Rule,
  ruleText,
  showPacket,
} from './detector.ts';

/** A netfilter rule dropped (or rejected) a packet of this flow. */
function detect(ctx: Ctx): Found | undefined {
  const drop = ctx.events.find(
    (e): e is Rule =>
      e.kind === 'rule' && (e.verdict === 'DROP' || e.verdict === 'REJECT') && concernsClient(e.packet, ctx.client),
  );
  if (!drop) return undefined;
  const text = ruleText(drop);
  const about = drop.packet.inner;
  const sentences = [
    about
      ? `${drop.node}'s rule \`${text}\` (${drop.table}/${drop.chain}) dropped the ICMP error ${showPacket({ ...drop.packet, inner: undefined })} that ${drop.node} sent ${drop.packet.dst} about its packet ${showPacket(about)} to the client.`
      : `${drop.node}'s rule \`${text}\` (${drop.table}/${drop.chain}) dropped the client's packet ${showPacket(drop.packet)}.`,
  ];
  if (about && drop.packet.icmp?.type === 3 && drop.packet.icmp.code === 4) {
    const tooBig = ctx.events.filter(
      (e): e is Drop =>
        e.kind === 'drop' && e.reason === 'PKT_TOO_BIG' && e.packet.src === about.src && e.packet.dst === about.dst,
    );
    sentences.push(
      `${about.src} never learns the path MTU${drop.packet.icmp.mtu ? ` (${drop.packet.icmp.mtu})` : ''}, so it keeps sending full-size segments` +
        (tooBig[0]
          ? `, which ${tooBig[0].where} drops (${tooBig.reduce((n, e) => n + (e.repeat ?? 1), 0)}× PKT_TOO_BIG in ${tooBig[0].location} on ${tooBig[0].iface})`
          : '') +
        ': an MTU black hole (the handshake and small packets pass, the transfer hangs).',
    );
  }
  if (/INVALID/.test(text)) {
    const ct = lastConntrack(ctx, drop.node);
    const synAck = ctx.packets.find((p) => p.dst === ctx.client && p.flags?.startsWith('S.'));
    if (ct) {
      sentences.push(
        `conntrack on ${drop.node} still held the connection in ${ctState(ct)}` +
          (synAck
            ? `, although the client had received the SYN-ACK from ${endpoint(synAck.src, synAck.sport)}: the node's conntrack never saw that reply, so the client's next packet was INVALID there.`
            : ': it never saw a reply, so the next packet was INVALID.'),
      );
    }
    const tc = ctx.facts.find(
      (f): f is Extract<TraceFact, { kind: 'tc-program' }> =>
        f.kind === 'tc-program' && f.node === drop.node && f.hook === 'ingress',
    );
    if (tc && synAck)
      sentences.push(
        `The SYN-ACK was handled by the tc program ${tc.name} (id ${tc.id}) on ${drop.node} ${tc.dev} ingress, which reverse-SNATs replies and redirects them to the pod past netfilter.`,
      );
  }
  return {
    culprit: { kind: 'rule', node: drop.node, where: `${drop.table}/${drop.chain}`, text },
    packet: drop.packet,
    reason: sentences.join(' '),
  };
}

export const ruleDrop: Detector = { name: 'rule-drop', detect };
