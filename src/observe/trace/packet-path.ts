// The path a probe's packets took, as steps in time order: what the client's interface sent and
// received, each node's netfilter traversal (condensed to rewrites and verdicts), conntrack state
// changes, kernel drops, and the BPF programs or bridge the culprit names (inferred steps are marked).
// It is what the HTML report draws.
import type { Diagnosis, PathStep } from '../../model/diagnosis.ts';
import type { ProbeTraceResult, TraceEvent } from '../../model/trace-events.ts';
import { capturedAtMs, type Packet } from '../probes/packet-watch.ts';
import { ruleText } from './detectors/detector.ts';

export type { PathStep };

type Rule = Extract<TraceEvent, { kind: 'rule' }>;
/** `times`: how many identical events the step stands for (a drop's `repeat`). */
type Step = PathStep & { times?: number };

interface PathInput {
  client: string;
  /** Where the client runs, as a lane: `pod/web`, `node/node-a`, `host/ext`. */
  clientRef: string;
  target: { ip: string; port: number };
  packets: Packet[];
  trace: ProbeTraceResult;
  culprit: Omit<Diagnosis, 'path'>;
}

const short = (p: { proto: string; src: string; dst: string; sport?: number; dport?: number; flags?: string }) =>
  `${p.src}${p.sport !== undefined ? `:${p.sport}` : ''} > ${p.dst}${p.dport !== undefined ? `:${p.dport}` : ''} ${p.flags ? `[${p.flags}]` : p.proto}`;

/** When tcpdump captured the packet of `line`, in ms since the trace started. */
function captureAt(line: string, startedAt: number | undefined): number | undefined {
  const at = startedAt === undefined ? undefined : capturedAtMs(line, startedAt);
  return at === undefined || startedAt === undefined ? undefined : Math.round((at - startedAt) * 10) / 10;
}

/** TCP flags as a set of letters, from tcpdump (`S.`, `F.`, `R`) or from the trace (`SYN ACK`). */
function flagKey(flags: string | undefined): string {
  if (!flags) return '';
  const letters = /[A-Z]{3}/.test(flags)
    ? flags.split(/\s+/).map((w) => w[0]!)
    : [...flags].map((c) => (c === '.' ? 'A' : c));
  return [...new Set(letters)].sort().join('');
}

export function buildPath({ client, clientRef, packets, trace, culprit }: PathInput): PathStep[] {
  const steps: Step[] = [];
  // traced events are stamped when the harness reads them (ms late, unevenly); the client's capture has
  // the kernel's times. A traced packet that the client sent or received is placed next to that capture.
  const captured = packets.slice(0, 16).map((p) => ({ p, at: captureAt(p.line, trace.startedAt) }));
  const anchor = (
    pkt: { src: string; dst: string; sport?: number; dport?: number; flags?: string },
    offset: number,
    anyFlags = false,
  ): number | undefined => {
    const c = captured.find(
      ({ p }) =>
        p.src === pkt.src &&
        p.dst === pkt.dst &&
        p.sport === pkt.sport &&
        p.dport === pkt.dport &&
        (anyFlags ? p.flags?.includes('S') : flagKey(p.flags) === flagKey(pkt.flags)),
    );
    return c?.at === undefined ? undefined : Math.round((c.at + offset) * 100) / 100;
  };
  const sameTuple = (a: { src: string; dst: string; sport?: number; dport?: number }, b: typeof a) =>
    a.src === b.src && a.dst === b.dst && a.sport === b.sport && a.dport === b.dport;
  for (const { p, at: captured_ } of captured) {
    const at = captured_ ?? 0;
    steps.push({
      at,
      where: clientRef,
      hook: clientRef.startsWith('node/') ? 'any' : 'eth0',
      packet: short({ ...p, flags: p.flags }),
      action: p.src === client ? 'sent' : 'received',
      kind: p.src === client ? 'send' : 'receive',
    });
  }
  // one step per packet per node: its rewrites and the verdict, in hook order
  const byPacket = new Map<string, Rule[]>();
  for (const e of trace.events)
    if (e.kind === 'rule')
      byPacket.set(`${e.node}/${e.id}/${short(e.packet)}`, [
        ...(byPacket.get(`${e.node}/${e.id}/${short(e.packet)}`) ?? []),
        e,
      ]);
  for (const rules of byPacket.values()) {
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
    const verb = (r: Rule) =>
      /-j DNAT/.test(r.rule ?? '')
        ? 'DNAT'
        : /-j SNAT|MASQUERADE/.test(r.rule ?? '')
          ? 'SNAT'
          : r === dropped && rejected
            ? 'REJECT'
            : r.verdict;
    const action = (dropped ? [dropped] : shown).map((r) => `${r.table}/${r.chain} ${verb(r)}`);
    // the rule that dropped the culprit packet; or, for a probe nothing dropped, the NAT rule that rewrote it
    const isCulprit =
      culprit.culprit.kind === 'rule' &&
      (dropped
        ? `${dropped.table}/${dropped.chain}` === culprit.culprit.where &&
          sameTuple(dropped.packet, culprit.packet) &&
          flagKey(dropped.packet.flags) === flagKey(culprit.packet.flags)
        : rules.some(
            (r) =>
              r.node === culprit.culprit.node &&
              `${r.table}/${r.chain}` === culprit.culprit.where &&
              ruleText(r) === culprit.culprit.text,
          ));
    const toClient = first.packet.dst === client;
    steps.push({
      at: anchor(first.packet, toClient ? -0.03 : 0.02) ?? first.at,
      where: `node/${first.node}`,
      hook: `netfilter ${first.iif ?? ''}${first.oif ? `→${first.oif}` : ''}`.trim(),
      packet: short(first.packet),
      action: [...new Set(action)].join(' → ') || 'traversed',
      kind: rejected ? 'reject' : dropped ? 'drop' : 'netfilter',
      culprit: isCulprit || undefined,
    });
  }
  for (const e of trace.events) {
    if (e.kind === 'conntrack')
      steps.push({
        at: (e.event === 'NEW' ? anchor(e.packet, 0.025, true) : undefined) ?? e.at,
        where: `node/${e.node}`,
        hook: 'conntrack',
        packet: short(e.packet),
        action: `${e.event} ${e.state ?? ''}${e.unreplied ? ' [UNREPLIED]' : ''}`.replace(/\s+/g, ' ').trim(),
        kind: 'conntrack',
      });
    // a drop without a reason is shown only where the node's state explained it (drop-cause.ts)
    if (e.kind === 'drop' && (e.reason !== 'NOT_SPECIFIED' || e.cause)) {
      const isCulprit =
        (culprit.culprit.kind === 'socket' || culprit.culprit.kind === 'kernel') &&
        culprit.culprit.node === e.where &&
        sameTuple(e.packet, culprit.packet) &&
        flagKey(e.packet.flags) === flagKey(culprit.packet.flags);
      const inClient = e.where === clientRef;
      const action =
        e.cause?.kind === 'hairpin-off'
          ? `dropped by ${e.cause.bridge}: not sent back out ${e.cause.port} (hairpin off)`
          : `dropped: ${e.reason}`;
      steps.push({
        at: anchor(e.packet, inClient ? 0.01 : 0.03) ?? e.at,
        where: e.where,
        hook: `kernel ${e.location}`,
        packet: short(e.packet),
        action,
        kind: 'drop',
        culprit: isCulprit || undefined,
        times: e.repeat,
      });
    }
  }
  const received = (pred: (s: PathStep) => boolean) => steps.find((s) => s.kind === 'receive' && pred(s));
  if (culprit.culprit.kind === 'bpf-program') {
    steps.push({
      at: (steps.find((s) => s.kind === 'send')?.at ?? 0) - 0.05,
      where: `node/${culprit.culprit.node}`,
      hook: `cgroup connect4`,
      packet: short(culprit.packet),
      action: `connect() rewritten: ${culprit.culprit.text}`,
      kind: 'bpf',
      culprit: true,
      inferred: true,
    });
  }
  for (const tc of trace.facts) {
    if (tc.kind !== 'tc-program' || culprit.culprit.kind !== 'rule') continue;
    const synAck = received((s) => s.packet.includes('[S.]'));
    const syn = steps.find((s) => s.kind === 'send' && s.packet.endsWith('[S]'));
    if (tc.hook === 'ingress' && synAck)
      steps.push({
        at: synAck.at - 0.05,
        where: `node/${tc.node}`,
        hook: `tc ingress ${tc.dev}`,
        packet: synAck.packet,
        action: `${tc.name} (id ${tc.id}): reverse SNAT, redirect to the pod past netfilter`,
        kind: 'bpf',
        inferred: true,
      });
    if (tc.hook === 'egress' && syn)
      steps.push({
        at: syn.at + 0.04,
        where: `node/${tc.node}`,
        hook: `tc egress ${tc.dev}`,
        packet: syn.packet,
        action: `${tc.name} (id ${tc.id}): SNAT to the node's address`,
        kind: 'bpf',
        inferred: true,
      });
  }
  if (
    culprit.culprit.where.startsWith('bridge') ||
    (culprit.culprit.kind === 'socket' && culprit.reason.includes('bridged'))
  ) {
    const reply = received((s) => s.packet.startsWith(`${culprit.packet.src}:`));
    steps.push({
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
    });
  }
  return collapse(steps.sort((a, b) => a.at - b.at));
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
