// What every culprit detector reads and returns: the probe's context (its packets, its trace, the phase's
// checks and facts) and a culprit with its packet and a few sentences; and the words they share.
import type { Diagnosis, StateRead } from '../../../model/diagnosis.ts';
import type { ProbeFlow, TranslatedTuple } from '../../../model/probe-flow.ts';
import type { ProbeTraceResult, TraceEvent, TraceFact, TracePacket } from '../../../model/trace-events.ts';
import type { CheckResult } from '../../expect/run-checks.ts';
import type { Packet } from '../../probes/packet-watch.ts';
import { packetWords } from '../drop-verdict.ts';

/** What the diagnosis reads: the probe as observed, its phase's checks and steps, and its trace. */
export interface DiagnosisInput {
  probe: { id: string; observed: string; summary: string; detail: Record<string, unknown> };
  phase: string;
  checks: readonly CheckResult[];
  /** The phase's steps: a background step's output can name what it injected. */
  steps?: readonly { evidence?: string; output?: string }[];
  trace: ProbeTraceResult;
  address?: (ref: string) => string;
  /** The same probe in the baseline phase of the same lab: what it observed before any fault. */
  baseline?: { observed: string; detail: Record<string, unknown> };
}

/** A probe's diagnosis input with what every detector needs resolved: the flow, the client's packets, its own events. */
export interface Ctx extends DiagnosisInput {
  target: { ip: string; port: number };
  client: string;
  /** The client's flow on every node it crossed, under each address a NAT gave it. */
  flow: ProbeFlow;
  packets: Packet[];
  events: TraceEvent[];
  facts: TraceFact[];
}

/** A culprit, its packet and the sentences that explain it (the packet path is drawn afterwards). */
export type Found = Omit<Diagnosis, 'path'>;

/** One named way a probe can fail, tried in order: the first that finds its culprit in the context wins. */
export interface Detector {
  name: string;
  detect(ctx: Ctx): Found | undefined;
}

export type Rule = Extract<TraceEvent, { kind: 'rule' }>;
export type Drop = Extract<TraceEvent, { kind: 'drop' }>;
export type Conntrack = Extract<TraceEvent, { kind: 'conntrack' }>;

export const showPacket = packetWords;

/** Where the probe ran, from its summary (`web -> ...`: a pod; `node/node-a -> ...`, `host/ext -> ...`). */
export function clientRef(summary: string): string {
  const from = /^(\S+) -> /.exec(summary)?.[1] ?? 'client';
  return from.includes('/') ? from : `pod/${from}`;
}
/** `-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP`: the rule as iptables-save prints it. */
export const ruleText = (r: Rule) => (r.rule ?? `${r.chain} policy`).replace(/^-4 -t \S+ /, '');
export const endpoint = (ip: string, port?: number) => (port === undefined ? ip : `${ip}:${port}`);
export const ordinal = (n: number) => `${n}${n === 1 ? 'st' : n === 2 ? 'nd' : n === 3 ? 'rd' : 'th'}`;

/** The conntrack entry of the client's flow on `node`, as last reported. */
export function lastConntrack(ctx: Ctx, node: string): Conntrack | undefined {
  return ctx.events
    .filter(
      (e): e is Conntrack =>
        e.kind === 'conntrack' && e.node === node && e.packet.src === ctx.client && e.packet.dst === ctx.target.ip,
    )
    .at(-1);
}

export const ctState = (c: Conntrack) =>
  `${c.state ?? (c.unreplied ? 'NEW' : 'ESTABLISHED')}${c.unreplied ? ' [UNREPLIED]' : ''}`;

/** The nat rules with a DNAT, SNAT or MASQUERADE target the client's packet hit on the node that made `translated`, in hook order. */
export function natRules(ctx: Ctx, translated: TranslatedTuple): Rule[] {
  return ctx.events.filter(
    (e): e is Rule =>
      e.kind === 'rule' &&
      e.node === translated.node &&
      e.table === 'nat' &&
      /-j (SNAT|MASQUERADE|DNAT)\b/.test(e.rule ?? '') &&
      ctx.flow.clientPort(e.packet) === translated.clientPort,
  );
}

/** The NATs that made the packet's tuple (or the tuple of the packet an ICMP error quotes), first node first. */
function translations(ctx: Ctx, p: TracePacket): TranslatedTuple[] {
  const chain: TranslatedTuple[] = [];
  for (let t = ctx.flow.translationOf(p); t; t = t.from) chain.unshift(t);
  return chain;
}

/** The client's own packet that `p`, a packet a NAT made of it, stands for (as traced on the first NAT's node). */
function clientsOwn(ctx: Ctx, p: TracePacket, first: TranslatedTuple): TracePacket {
  const traced = ctx.events.find(
    (e) =>
      e.kind === 'rule' &&
      e.node === first.node &&
      e.packet.src === ctx.client &&
      e.packet.sport === first.clientPort &&
      e.packet.proto === p.proto,
  )?.packet;
  return (
    traced ?? { proto: p.proto, src: ctx.client, sport: first.clientPort, dst: ctx.target.ip, dport: ctx.target.port }
  );
}

/** What each NAT on the way did to the client's packet: `node-a masqueraded (nat/CHAIN \`rule\`) it into tcp 172.18.0.2:14440 > ...`. */
function natSteps(ctx: Ctx, p: TracePacket, flags: string | undefined): string[] {
  return translations(ctx, p).map((t) => {
    const verbs = natRules(ctx, t).map((r) => {
      const target = /-j (SNAT|MASQUERADE|DNAT)\b/.exec(r.rule ?? '')?.[1];
      return `${target === 'MASQUERADE' ? 'masqueraded' : `${target}ed`} (${r.table}/${r.chain} \`${ruleText(r)}\`)`;
    });
    return `${t.node} ${verbs.length ? verbs.join(' and ') : 'rewrote'} it into ${showPacket({ ...t.tuple, flags })}`;
  });
}

/**
 * The packet in words; for one a NAT made of the client's, the client's own packet and each NAT in turn:
 * `tcp 10.244.1.3:59168 > 172.18.0.3:30080 [SYN] (node-a masqueraded (nat/CHAIN \`rule\`) it into tcp 172.18.0.2:14440 > ...)`;
 * for a reply to such a packet, the reply and what the client's packet became.
 */
export function flowPacketWords(ctx: Ctx, p: TracePacket): string {
  const chain = translations(ctx, p);
  if (!chain.length || p.inner) return showPacket(p);
  const own = clientsOwn(ctx, p, chain[0]!);
  if (ctx.flow.outbound(p))
    return `${showPacket({ ...own, flags: p.flags })} (${natSteps(ctx, p, p.flags).join(', then ')})`;
  return `${showPacket(p)} (the reply to the client's ${showPacket(own)}: ${natSteps(ctx, p, own.flags).join(', then ')})`;
}

/** The conntrack entries behind each NAT the packet went through, as `conntrack -E` printed them on their nodes. */
export function translationEvidence(ctx: Ctx, p: TracePacket): StateRead[] {
  return translations(ctx, p).map((t) => ({ where: `node/${t.node}`, command: 'conntrack -E', output: t.line }));
}
