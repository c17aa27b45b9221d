// A fault without a drop: the probe was answered, but what it observed changed. Nothing was dropped, so the
// culprit is the NAT rule that rewrote the client's packet on its way: a SNAT or MASQUERADE, so the server
// saw a node's address instead of the client's; or, when the backend that answered changed since the
// baseline, the DNAT that sent the packet there. Read from the rule the traced packet hit (its text as
// iptables-save prints it) and the conntrack entry that kept the rewrite.
import type { TranslatedTuple } from '../../../model/probe-flow.ts';
import {
  type Ctx,
  type Detector,
  endpoint,
  flowPacketWords,
  type Found,
  natRules,
  type Rule,
  ruleText,
  showPacket,
  translationEvidence,
} from './detector.ts';

const isSnat = (r: Rule) => /-j (SNAT|MASQUERADE)\b/.test(r.rule ?? '');

/** The rule that marked the packet for kube-proxy's masquerade on `node` (a jump to KUBE-MARK-MASQ, or the mark itself). */
function masqueradeMark(ctx: Ctx, node: string, clientPort: number | undefined): Rule | undefined {
  const ofFlow = (r: Rule) => r.node === node && ctx.flow.clientPort(r.packet) === clientPort;
  return (
    ctx.events.find((e): e is Rule => e.kind === 'rule' && e.target === 'KUBE-MARK-MASQ' && ofFlow(e)) ??
    ctx.events.find(
      (e): e is Rule => e.kind === 'rule' && /-j MARK --set-xmark 0x4000\//.test(e.rule ?? '') && ofFlow(e),
    )
  );
}

/** The flow was masqueraded or SNATed on its way: the last such NAT is what the server saw. */
function snatFound(ctx: Ctx, translations: readonly TranslatedTuple[]): Found | undefined {
  const snatted = translations.filter((t) => natRules(ctx, t).some(isSnat)).at(-1);
  if (!snatted) return undefined;
  const rule = natRules(ctx, snatted).find(isSnat)!;
  const seen = snatted.tuple.src;
  const sentences = [
    `Nothing dropped the probe: it was answered, but the server did not see the client's address, for a NAT rewrote the client's packet ${flowPacketWords(ctx, { ...snatted.tuple, flags: rule.packet.flags })}.`,
    `So the server saw ${endpoint(seen, snatted.tuple.sport)}, the source ${snatted.node} gave it, instead of ${ctx.client}.`,
  ];
  const mark = masqueradeMark(ctx, snatted.node, snatted.clientPort);
  if (mark)
    sentences.push(
      `${snatted.node} marked it for that masquerade in ${mark.table}/${mark.chain}: \`${ruleText(mark)}\`.`,
    );
  sentences.push(`conntrack on ${snatted.node} keeps the rewrite for the connection and reverses it for the reply.`);
  return {
    culprit: { kind: 'rule', node: snatted.node, where: `${rule.table}/${rule.chain}`, text: ruleText(rule) },
    packet: rule.packet,
    reason: sentences.join(' '),
    evidence: translationEvidence(ctx, { ...snatted.tuple, flags: rule.packet.flags }),
  };
}

/** The backend that answered changed since the baseline: the DNAT that chose it, and the rule that jumped there. */
function dnatFound(ctx: Ctx, servedBy: string, before: string): Found | undefined {
  const dnat = ctx.events.find(
    (e): e is Rule =>
      e.kind === 'rule' &&
      e.table === 'nat' &&
      /-j DNAT\b/.test(e.rule ?? '') &&
      ctx.flow.outbound(e.packet) !== undefined,
  );
  if (!dnat) return undefined;
  const to = /--to-destination (\S+)/.exec(dnat.rule ?? '')?.[1];
  const picked = ctx.events.find(
    (e): e is Rule => e.kind === 'rule' && e.node === dnat.node && e.verdict === 'JUMP' && e.target === dnat.chain,
  );
  const sentences = [
    `Nothing dropped the probe: it was answered, by ${servedBy} where the baseline was answered by ${before}. ${dnat.node}'s rule \`${ruleText(dnat)}\` (${dnat.table}/${dnat.chain}) sent the client's packet ${showPacket(dnat.packet)}${to ? ` to ${to}` : ''}.`,
  ];
  if (picked) sentences.push(`${picked.table}/${picked.chain} chose that endpoint: \`${ruleText(picked)}\`.`);
  return {
    culprit: { kind: 'rule', node: dnat.node, where: `${dnat.table}/${dnat.chain}`, text: ruleText(dnat) },
    packet: dnat.packet,
    reason: sentences.join(' '),
  };
}

function detect(ctx: Ctx): Found | undefined {
  if (ctx.probe.observed !== 'ok') return undefined;
  const servedBy = ctx.probe.detail.servedBy;
  const before = ctx.baseline?.detail.servedBy;
  if (typeof servedBy === 'string' && typeof before === 'string' && servedBy !== before)
    return dnatFound(ctx, servedBy, before);
  return snatFound(ctx, ctx.flow.translations);
}

export const natRewrite: Detector = { name: 'nat-rewrite', detect };
