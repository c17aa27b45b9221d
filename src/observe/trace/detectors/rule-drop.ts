// A netfilter rule dropped or rejected a packet of the client's flow, on whichever node it reached (under the
// address a NAT on the way gave it): the rule as iptables-save prints it, or the chain whose policy DROP applied
// when no rule of it took the packet, and for an INVALID drop, why conntrack could not place the packet.
import type { TraceFact } from '../../../model/trace-events.ts';
import {
  type Conntrack,
  ctState,
  type Ctx,
  type Detector,
  type Drop,
  endpoint,
  type Found,
  lastConntrack,
  type Rule,
  ruleText,
  flowPacketWords,
  showPacket,
  translationEvidence,
} from './detector.ts';

/** `icmp-port-unreachable` -> `ICMP port-unreachable`, `tcp-reset` -> `a TCP RST`: what a REJECT rule answers with. */
function rejectAnswer(rule: string): string {
  const with_ = /--reject-with (\S+)/.exec(rule)?.[1] ?? 'icmp-port-unreachable';
  if (with_ === 'tcp-reset') return 'a TCP RST';
  return `ICMP ${with_.replace(/^icmp-/, '')}`;
}

/** A netfilter rule dropped (or rejected) a packet of this flow. */
function detect(ctx: Ctx): Found | undefined {
  const drop = ctx.events.find(
    (e): e is Rule =>
      e.kind === 'rule' &&
      (e.verdict === 'DROP' || e.verdict === 'REJECT' || e.verdict === 'policy DROP') &&
      ctx.flow.concerns(e.packet),
  );
  if (!drop) return undefined;
  if (drop.verdict === 'policy DROP') return policyDrop(ctx, drop);
  const text = ruleText(drop);
  const about = drop.packet.inner;
  // nf_tables traces a REJECT rule with a drop verdict: the rule's target says which it was
  const rejected = drop.verdict === 'REJECT' || /-j REJECT\b/.test(text);
  const translated = ctx.flow.translationOf(drop.packet);
  const what = `${ctx.flow.outbound(drop.packet) ? "the client's packet" : 'the packet'} ${flowPacketWords(ctx, drop.packet)}`;
  const sentences = [
    about
      ? `${drop.node}'s rule \`${text}\` (${drop.table}/${drop.chain}) dropped the ICMP error ${showPacket({ ...drop.packet, inner: undefined })} that ${drop.node} sent ${drop.packet.dst} about its packet ${showPacket(about)} to the client.`
      : rejected
        ? `${drop.node}'s rule \`${text}\` (${drop.table}/${drop.chain}) rejected ${what}: it answered with ${rejectAnswer(text)} instead of passing it on.`
        : `${drop.node}'s rule \`${text}\` (${drop.table}/${drop.chain}) dropped ${what}.`,
  ];
  if (rejected && !about) {
    const answer = ctx.packets.find((p) => p.dst === ctx.client && (p.icmp !== undefined || p.flags?.startsWith('R')));
    if (answer)
      sentences.push(
        `The client got it${translated ? `, reverse-NATed by ${translated.node}` : ''}: ${answer.icmp ? `ICMP ${answer.icmp.name} from ${answer.src}` : `RST from ${endpoint(answer.src, answer.sport)}`}.`,
      );
  }
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
    const ct = conntrackAtDrop(ctx, drop);
    const synAck = ctx.packets.find((p) => p.dst === ctx.client && p.flags?.startsWith('S.'));
    if (ct && (ct.unreplied || ct.state === 'SYN_SENT' || ct.state === 'NEW')) {
      sentences.push(
        `conntrack on ${drop.node} still held the connection in ${ctState(ct)}` +
          (synAck
            ? `, although the client had received the SYN-ACK from ${endpoint(synAck.src, synAck.sport)}: the node's conntrack never saw that reply, so the client's next packet was INVALID there.`
            : ': it never saw a reply, so the next packet was INVALID.'),
      );
    } else if (ct) {
      // the entry saw both ways: the packet itself did not fit the connection (a segment outside its window)
      const logged = ctx.checks.flatMap((c) => c.evidence).find((l) => /nf_ct_proto_\d+: /.test(l));
      sentences.push(
        `conntrack on ${drop.node} had seen the connection both ways (${ctState(ct)}), so the packet was INVALID by itself: it did not fit the connection's TCP window` +
          (logged ? `, as the kernel logged: "${/nf_ct_proto_\d+: .*/.exec(logged)![0].trim()}".` : '.'),
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
  const evidence = translationEvidence(ctx, drop.packet);
  return {
    culprit: { kind: 'rule', node: drop.node, where: `${drop.table}/${drop.chain}`, text },
    packet: drop.packet,
    reason: sentences.join(' '),
    ...(evidence.length ? { evidence } : {}),
  };
}

/** The conntrack entry of the dropped packet's own connection on the drop's node, as last reported before the drop. */
function conntrackAtDrop(ctx: Ctx, drop: Rule): Conntrack | undefined {
  const port = ctx.flow.clientPort(drop.packet);
  const before = ctx.events.slice(0, ctx.events.indexOf(drop));
  const own = before
    .filter(
      (e): e is Conntrack =>
        e.kind === 'conntrack' &&
        e.node === drop.node &&
        e.packet.src === ctx.client &&
        (port === undefined || ctx.flow.clientPort(e.packet) === port),
    )
    .at(-1);
  return own ?? lastConntrack(ctx, drop.node);
}

/** The chain's policy DROP took the packet: no rule of the chain accepted it (Docker sets FORWARD's at start). */
function policyDrop(ctx: Ctx, drop: Rule): Found {
  // the chains the packet was sent to from this one and came back from without a verdict
  const jumped = ctx.events
    .filter(
      (e): e is Rule =>
        e.kind === 'rule' &&
        e.node === drop.node &&
        e.table === drop.table &&
        e.chain === drop.chain &&
        e.id === drop.id &&
        e.verdict === 'JUMP',
    )
    .map((e) => /-j (\S+)/.exec(e.rule ?? '')?.[1])
    .filter((c): c is string => c !== undefined);
  const chains = [...new Set(jumped)];
  const sentences = [
    `${drop.node}'s ${drop.table} ${drop.chain} chain dropped the client's packet ${flowPacketWords(ctx, drop.packet)} by its policy DROP: no rule of the chain accepted it${chains.length ? ` (it came back from ${chains.join(', ')} without one)` : ''}.`,
    drop.chain === 'FORWARD'
      ? 'A policy applies to every packet no rule decides: the FORWARD policy DROP Docker sets when it starts leaves forwarded traffic to the ACCEPT rules other components add (KUBE-FORWARD, FLANNEL-FWD), for the packets they match.'
      : 'A policy applies to every packet no rule of its chain decides.',
  ];
  // the policy's own counter, read with the trace: how many packets it has taken so far
  const counted = ctx.facts.find(
    (f): f is Extract<TraceFact, { kind: 'policy' }> =>
      f.kind === 'policy' && f.node === drop.node && f.chain === drop.chain && drop.table === 'filter',
  );
  if (counted)
    sentences.push(
      `Its counter on ${drop.node} reads ${counted.packets} packet${counted.packets === 1 ? '' : 's'} taken by the policy (\`${counted.line}\`).`,
    );
  const evidence = [
    ...(counted
      ? [{ where: `node/${drop.node}`, command: `iptables -t filter -L ${drop.chain} -v -x -n`, output: counted.line }]
      : []),
    ...translationEvidence(ctx, drop.packet),
  ];
  return {
    culprit: { kind: 'rule', node: drop.node, where: `${drop.table}/${drop.chain}`, text: `-P ${drop.chain} DROP` },
    packet: drop.packet,
    reason: sentences.join(' '),
    ...(evidence.length ? { evidence } : {}),
  };
}

export const ruleDrop: Detector = { name: 'rule-drop', detect };
