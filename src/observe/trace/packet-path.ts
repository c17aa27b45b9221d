// The path a probe's packets took, as steps in time order: what the client's interface sent and
// received, each node's netfilter traversal (condensed to rewrites and verdicts), conntrack state
// changes, kernel drops, and the BPF programs or bridge the culprit names (inferred steps are marked).
// It is what the HTML report draws.
import type { Diagnosis, PathStep } from '../../model/diagnosis.ts';
import type { ProbeTraceResult, TraceEvent } from '../../model/trace-events.ts';
import type { Packet } from '../probes/packet-watch.ts';
import { ClientCapture } from './client-capture.ts';
import { ruleText } from './detectors/detector.ts';
import { samePacket, short } from './path-packets.ts';

export type { PathStep };

type Rule = Extract<TraceEvent, { kind: 'rule' }>;
type Conntrack = Extract<TraceEvent, { kind: 'conntrack' }>;
type Drop = Extract<TraceEvent, { kind: 'drop' }>;
type TcProgram = Extract<ProbeTraceResult['facts'][number], { kind: 'tc-program' }>;
type Culprit = Omit<Diagnosis, 'path'>;
/** `times`: how many identical events the step stands for (a drop's `repeat`). */
type Step = PathStep & { times?: number };

interface PathInput {
  client: string;
  /** Where the client runs, as a lane: `pod/web`, `node/node-a`, `host/ext`. */
  clientRef: string;
  target: { ip: string; port: number };
  packets: Packet[];
  trace: ProbeTraceResult;
  culprit: Culprit;
}

/** Steps in push order: a stable sort keeps that order among steps at the same time. */
export function buildPath(whole: PathInput): PathStep[] {
  const capture = new ClientCapture(whole.packets, whole.trace.startedAt);
  // the trace also holds what the client's earlier connections did meanwhile (a late FIN dropped): only the
  // probe's own connections, by the client's ports on its captured packets, are drawn
  const input = {
    ...whole,
    trace: { ...whole.trace, events: whole.trace.events.filter(ownConnection(whole, capture)) },
  };
  const seen = clientSteps(input, capture);
  const steps: Step[] = [
    ...seen,
    ...netfilterSteps(input, capture),
    ...kernelEventSteps(input, capture),
    ...inferredSteps(input, seen),
  ];
  return collapse(steps.sort((a, b) => a.at - b.at));
}

/** Whether a traced event is of the probe's own connections: any not to or from the client's ports is not. */
function ownConnection({ client }: PathInput, capture: ClientCapture): (e: TraceEvent) => boolean {
  const ports = new Set(capture.packets.flatMap(({ p }) => (p.src === client ? p.sport : p.dport) ?? []));
  if (ports.size === 0) return () => true;
  return (e) => {
    if (!('packet' in e)) return true;
    const { src, dst, sport, dport } = e.packet;
    if (src === client && sport !== undefined) return ports.has(sport);
    if (dst === client && dport !== undefined) return ports.has(dport);
    return true;
  };
}

/**
 * What the client's own interface sent and received, at the kernel's times. A packet from the client that its own
 * namespace dropped as another host's (OTHERHOST) came back to it: a bridge flooded it, so it was received.
 */
function clientSteps({ client, clientRef, trace }: PathInput, capture: ClientCapture): Step[] {
  const floodedBack = trace.events.filter(
    (e): e is Drop => e.kind === 'drop' && e.where === clientRef && e.reason === 'OTHERHOST',
  );
  return capture.packets.map(({ p, at }) => {
    const sent = p.src === client && !floodedBack.some((d) => samePacket(d.packet, { ...p, flags: p.flags }));
    return {
      at: at ?? 0,
      where: clientRef,
      hook: clientRef.startsWith('node/') ? 'any' : 'eth0',
      packet: short({ ...p, flags: p.flags }),
      action: sent ? 'sent' : 'received',
      kind: sent ? 'send' : 'receive',
    };
  });
}

/** One step per packet per node: its rewrites and the verdict, in hook order. */
function netfilterSteps(input: PathInput, capture: ClientCapture): Step[] {
  const byPacket = new Map<string, Rule[]>();
  for (const e of input.trace.events)
    if (e.kind === 'rule')
      byPacket.set(`${e.node}/${e.id}/${short(e.packet)}`, [
        ...(byPacket.get(`${e.node}/${e.id}/${short(e.packet)}`) ?? []),
        e,
      ]);
  return [...byPacket.values()].map((rules) => netfilterStep(rules, input, capture));
}

/** The rule that dropped a packet, and whether it answered instead (REJECT). */
interface RuleVerdict {
  dropped: Rule | undefined;
  rejected: boolean;
}

function netfilterStep(rules: Rule[], { client, culprit }: PathInput, capture: ClientCapture): Step {
  const first = rules[0]!;
  const shown = rules.filter(
    (r) =>
      r.table !== 'raw' &&
      r.verdict !== 'CONTINUE' &&
      r.verdict !== 'JUMP' &&
      !(r.verdict === 'policy ACCEPT' && r.table !== 'filter'),
  );
  const dropped = rules.find((r) => r.verdict === 'DROP' || r.verdict === 'REJECT');
  // nf_tables traces a REJECT rule with a drop verdict: the rule's target says which it was
  const rejected = dropped !== undefined && (dropped.verdict === 'REJECT' || /-j REJECT\b/.test(dropped.rule ?? ''));
  const verdict = { dropped, rejected };
  const action = (dropped ? [dropped] : shown).map((r) => `${r.table}/${r.chain} ${ruleVerb(r, verdict)}`);
  const toClient = first.packet.dst === client;
  return {
    at: capture.anchor(first.packet, toClient ? -0.03 : 0.02) ?? first.at,
    where: `node/${first.node}`,
    hook: `netfilter ${first.iif ?? ''}${first.oif ? `→${first.oif}` : ''}`.trim(),
    packet: short(first.packet),
    action: [...new Set(action)].join(' → ') || 'traversed',
    kind: rejected ? 'reject' : dropped ? 'drop' : 'netfilter',
    culprit: isCulpritRule(rules, dropped, culprit) || undefined,
  };
}

/** What a rule did to the packet: a NAT rewrite, a REJECT, or its verdict. */
function ruleVerb(r: Rule, { dropped, rejected }: RuleVerdict): string {
  return /-j DNAT/.test(r.rule ?? '')
    ? 'DNAT'
    : /-j SNAT|MASQUERADE/.test(r.rule ?? '')
      ? 'SNAT'
      : r === dropped && rejected
        ? 'REJECT'
        : r.verdict;
}

/** The rule that dropped the culprit packet; or, for a probe nothing dropped, the NAT rule that rewrote it. */
function isCulpritRule(rules: Rule[], dropped: Rule | undefined, culprit: Culprit): boolean {
  return (
    culprit.culprit.kind === 'rule' &&
    (dropped
      ? `${dropped.table}/${dropped.chain}` === culprit.culprit.where && samePacket(dropped.packet, culprit.packet)
      : rules.some(
          (r) =>
            r.node === culprit.culprit.node &&
            `${r.table}/${r.chain}` === culprit.culprit.where &&
            ruleText(r) === culprit.culprit.text,
        ))
  );
}

/** Conntrack's state changes and the kernel's drops, in the order traced. */
function kernelEventSteps(input: PathInput, capture: ClientCapture): Step[] {
  const steps: Step[] = [];
  for (const e of input.trace.events) {
    if (e.kind === 'conntrack') steps.push(conntrackStep(e, capture));
    // a drop without a reason is shown only where the node's state explained it (drop-cause.ts)
    if (e.kind === 'drop' && (e.reason !== 'NOT_SPECIFIED' || e.cause)) steps.push(dropStep(e, input, capture));
  }
  return steps;
}

function conntrackStep(e: Conntrack, capture: ClientCapture): Step {
  return {
    at: (e.event === 'NEW' ? capture.anchor(e.packet, 0.025, true) : undefined) ?? e.at,
    where: `node/${e.node}`,
    hook: 'conntrack',
    packet: short(e.packet),
    action: `${e.event} ${e.state ?? ''}${e.unreplied ? ' [UNREPLIED]' : ''}`.replace(/\s+/g, ' ').trim(),
    kind: 'conntrack',
  };
}

function dropStep(e: Drop, { clientRef, culprit }: PathInput, capture: ClientCapture): Step {
  const isCulprit =
    (culprit.culprit.kind === 'socket' || culprit.culprit.kind === 'kernel') &&
    culprit.culprit.node === e.where &&
    samePacket(e.packet, culprit.packet);
  const inClient = e.where === clientRef;
  const action =
    e.cause?.kind === 'hairpin-off'
      ? `dropped by ${e.cause.bridge}: not sent back out ${e.cause.port} (hairpin off)`
      : `dropped: ${e.reason}`;
  return {
    at: capture.anchor(e.packet, inClient ? 0.01 : 0.03) ?? e.at,
    where: e.where,
    hook: `kernel ${e.location}`,
    packet: short(e.packet),
    action,
    kind: 'drop',
    culprit: isCulprit || undefined,
    times: e.repeat,
  };
}

/** Steps no trace shows but the culprit implies (marked inferred), placed next to what the client saw. */
function inferredSteps({ culprit, trace }: PathInput, seen: Step[]): Step[] {
  return [
    ...connectRewriteSteps(culprit, seen),
    ...tcProgramSteps(trace, culprit, seen),
    ...bridgedReplySteps(culprit, seen),
    ...conntrackDnatSteps(culprit, seen),
  ];
}

/** An entry that kept a DNAT no rule makes, drawn where the packet enters the node. */
function conntrackDnatSteps(culprit: Culprit, seen: Step[]): Step[] {
  if (culprit.culprit.kind !== 'conntrack') return [];
  const to = /DNAT to (\S+)$/.exec(culprit.culprit.text)?.[1] ?? '';
  const sent = seen.find((s) => s.kind === 'send' && s.packet === short(culprit.packet));
  return [
    {
      // conntrack looks the packet up as it enters the node, once the client has sent it
      at: (sent?.at ?? 0) + 0.01,
      where: `node/${culprit.culprit.node}`,
      hook: 'conntrack',
      packet: short(culprit.packet),
      action: `DNAT to ${to} by an existing entry (no rule)`,
      kind: 'conntrack',
      culprit: true,
      inferred: true,
    },
  ];
}

/** A cgroup connect4 program rewrote the destination before the first packet was sent. */
function connectRewriteSteps(culprit: Culprit, seen: Step[]): Step[] {
  if (culprit.culprit.kind !== 'bpf-program') return [];
  return [
    {
      at: (seen.find((s) => s.kind === 'send')?.at ?? 0) - 0.05,
      where: `node/${culprit.culprit.node}`,
      hook: `cgroup connect4`,
      packet: short(culprit.packet),
      action: `connect() rewritten: ${culprit.culprit.text}`,
      kind: 'bpf',
      culprit: true,
      inferred: true,
    },
  ];
}

/**
 * Where a rule is the culprit, the tc programs that handled the SYN and the SYN-ACK past netfilter: on the
 * culprit's node and the nodes whose netfilter or conntrack saw the flow, never on a node it did not cross.
 */
function tcProgramSteps(trace: ProbeTraceResult, culprit: Culprit, seen: Step[]): Step[] {
  if (culprit.culprit.kind !== 'rule') return [];
  const crossed = new Set([
    culprit.culprit.node,
    ...trace.events.flatMap((e) => (e.kind === 'rule' || e.kind === 'conntrack' ? [e.node] : [])),
  ]);
  const steps: Step[] = [];
  for (const tc of trace.facts) {
    if (tc.kind !== 'tc-program' || !crossed.has(tc.node)) continue;
    const synAck = firstReceived(seen, (s) => s.packet.includes('[S.]'));
    const syn = seen.find((s) => s.kind === 'send' && s.packet.endsWith('[S]'));
    if (tc.hook === 'ingress' && synAck) steps.push(tcIngressStep(tc, synAck));
    if (tc.hook === 'egress' && syn) steps.push(tcEgressStep(tc, syn));
  }
  return steps;
}

function tcEgressStep(tc: TcProgram, syn: Step): Step {
  return {
    at: syn.at + 0.04,
    where: `node/${tc.node}`,
    hook: `tc egress ${tc.dev}`,
    packet: syn.packet,
    action: `${tc.name} (id ${tc.id}): SNAT to the node's address`,
    kind: 'bpf',
    inferred: true,
  };
}

function tcIngressStep(tc: TcProgram, synAck: Step): Step {
  return {
    at: synAck.at - 0.05,
    where: `node/${tc.node}`,
    hook: `tc ingress ${tc.dev}`,
    packet: synAck.packet,
    action: `${tc.name} (id ${tc.id}): reverse SNAT, redirect to the pod past netfilter`,
    kind: 'bpf',
    inferred: true,
  };
}

/** A reply bridged without netfilter, so never reverse-NATed, just before the client received it. */
function bridgedReplySteps(culprit: Culprit, seen: Step[]): Step[] {
  if (
    !(
      culprit.culprit.where.startsWith('bridge') ||
      (culprit.culprit.kind === 'socket' && culprit.reason.includes('bridged'))
    )
  )
    return [];
  const reply = firstReceived(seen, (s) => s.packet.startsWith(`${culprit.packet.src}:`));
  return [
    {
      at: (reply?.at ?? 0) - 0.05,
      where: `node/${culprit.culprit.kind === 'kernel' ? culprit.culprit.node : 'bridge'}`.replace(
        'node/bridge',
        'bridge',
      ),
      hook: 'bridge',
      packet: short(culprit.packet),
      action: 'bridged without netfilter: no reverse NAT',
      kind: 'bridge',
      culprit: culprit.culprit.kind === 'kernel' || undefined,
      inferred: true,
    },
  ];
}

function firstReceived(seen: Step[], pred: (s: PathStep) => boolean): Step | undefined {
  return seen.find((s) => s.kind === 'receive' && pred(s));
}

/** Repeats in a row (the same RST five times, a drop the tracer counted five times) become one step marked `×5`. */
function collapse(steps: Step[]): PathStep[] {
  const out: Step[] = [];
  for (const s of steps) {
    const last = out.at(-1);
    if (last && last.where === s.where && last.hook === s.hook && last.packet === s.packet && last.action === s.action)
      last.times = (last.times ?? 1) + (s.times ?? 1);
    else out.push({ ...s });
  }
  return out.map(({ times, ...s }) => (times && times > 1 ? { ...s, action: `${s.action} ×${times}` } : s));
}
