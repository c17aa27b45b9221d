// The path a probe's packets took, as steps in time order: what the client's interface sent and
// received, each node's netfilter traversal (condensed to rewrites and verdicts), conntrack state
// changes, kernel drops, and the BPF programs or bridge the culprit names (inferred steps are marked).
// It is what the HTML report draws.
import type { ProbeTraceResult, TraceEvent } from '../model/trace-events.ts';
import type { Packet } from '../probes/packet-watch.ts';
import type { Diagnosis } from './diagnosis.ts';

export interface PathStep {
  /** ms since the trace started (client capture times are lined up by wall clock). */
  at: number;
  /** `pod/client`, `node/node-a`, ... */
  where: string;
  /** The interface, hook, table/chain, conntrack, or program. */
  hook: string;
  packet: string;
  action: string;
  kind: 'send' | 'receive' | 'netfilter' | 'conntrack' | 'drop' | 'bpf' | 'bridge';
  culprit?: boolean;
  /** Not traced directly: deduced from the other steps and the lab's facts. */
  inferred?: boolean;
}

type Rule = Extract<TraceEvent, { kind: 'rule' }>;

interface PathInput {
  client: string;
  target: { ip: string; port: number };
  packets: Packet[];
  trace: ProbeTraceResult;
  culprit: Omit<Diagnosis, 'path'>;
}

const short = (p: { proto: string; src: string; dst: string; sport?: number; dport?: number; flags?: string }) =>
  `${p.src}${p.sport !== undefined ? `:${p.sport}` : ''} > ${p.dst}${p.dport !== undefined ? `:${p.dport}` : ''} ${p.flags ? `[${p.flags}]` : p.proto}`;

/** tcpdump's `HH:MM:SS.ffffff` (local time), in ms since the trace started. */
function captureAt(line: string, startedAt: number | undefined): number | undefined {
  const m = /^(\d\d):(\d\d):(\d\d\.\d+)/.exec(line);
  if (!m || startedAt === undefined) return undefined;
  const d = new Date(startedAt);
  d.setHours(Number(m[1]), Number(m[2]), 0, 0);
  return Math.round((d.getTime() + Number(m[3]) * 1000 - startedAt) * 10) / 10;
}

export function buildPath({ client, packets, trace, culprit }: PathInput): PathStep[] {
  const steps: PathStep[] = [];
  const sameTuple = (a: { src: string; dst: string; sport?: number; dport?: number }, b: typeof a) => a.src === b.src && a.dst === b.dst && a.sport === b.sport && a.dport === b.dport;
  for (const p of packets.slice(0, 16)) {
    const at = captureAt(p.line, trace.startedAt) ?? 0;
    steps.push({ at, where: 'pod/client', hook: 'eth0', packet: short({ ...p, flags: p.flags }), action: p.src === client ? 'sent' : 'received', kind: p.src === client ? 'send' : 'receive' });
  }
  // one step per packet per node: its rewrites and the verdict, in hook order
  const byPacket = new Map<string, Rule[]>();
  for (const e of trace.events) if (e.kind === 'rule') byPacket.set(`${e.node}/${e.id}/${short(e.packet)}`, [...(byPacket.get(`${e.node}/${e.id}/${short(e.packet)}`) ?? []), e]);
  for (const rules of byPacket.values()) {
    const first = rules[0]!;
    const shown = rules.filter((r) => r.table !== 'raw' && r.verdict !== 'CONTINUE' && r.verdict !== 'JUMP' && !(r.verdict === 'policy ACCEPT' && r.table !== 'filter'));
    const dropped = rules.find((r) => r.verdict === 'DROP' || r.verdict === 'REJECT');
    const action = (dropped ? [dropped] : shown).map((r) => `${r.table}/${r.chain} ${/-j DNAT/.test(r.rule ?? '') ? 'DNAT' : /-j SNAT|MASQUERADE/.test(r.rule ?? '') ? 'SNAT' : r.verdict}`);
    const isCulprit = culprit.culprit.kind === 'rule' && dropped !== undefined && `${dropped.table}/${dropped.chain}` === culprit.culprit.where && sameTuple(dropped.packet, culprit.packet);
    steps.push({
      at: first.at,
      where: `node/${first.node}`,
      hook: `netfilter${first.iif ? ` in ${first.iif}` : ''}${first.oif ? ` out ${first.oif}` : ''}`,
      packet: short(first.packet),
      action: [...new Set(action)].join(' → ') || 'traversed',
      kind: dropped ? 'drop' : 'netfilter',
      culprit: isCulprit || undefined,
    });
  }
  for (const e of trace.events) {
    if (e.kind === 'conntrack') steps.push({ at: e.at, where: `node/${e.node}`, hook: 'conntrack', packet: short(e.packet), action: `${e.event} ${e.state ?? ''}${e.unreplied ? ' [UNREPLIED]' : ''}`.replace(/\s+/g, ' ').trim(), kind: 'conntrack' });
    if (e.kind === 'drop' && e.reason !== 'NOT_SPECIFIED') {
      const isCulprit = (culprit.culprit.kind === 'socket' || culprit.culprit.kind === 'kernel') && culprit.culprit.node === e.where && sameTuple(e.packet, culprit.packet);
      steps.push({ at: e.at, where: e.where, hook: `kernel ${e.location}`, packet: short(e.packet), action: `dropped: ${e.reason}`, kind: 'drop', culprit: isCulprit || undefined });
    }
  }
  const received = (pred: (s: PathStep) => boolean) => steps.find((s) => s.kind === 'receive' && pred(s));
  if (culprit.culprit.kind === 'bpf-program') {
    steps.push({ at: (steps.find((s) => s.kind === 'send')?.at ?? 0) - 0.05, where: `node/${culprit.culprit.node}`, hook: `cgroup connect4`, packet: short(culprit.packet), action: `connect() rewritten: ${culprit.culprit.text}`, kind: 'bpf', culprit: true, inferred: true });
  }
  for (const tc of trace.facts) {
    if (tc.kind !== 'tc-program' || tc.hook !== 'ingress' || culprit.culprit.kind !== 'rule') continue;
    const synAck = received((s) => s.packet.includes('[S.]'));
    if (synAck) steps.push({ at: synAck.at - 0.05, where: `node/${tc.node}`, hook: `tc ingress ${tc.dev}`, packet: synAck.packet, action: `${tc.name.replace(/:\[.*$/, '')} (id ${tc.id}): reverse SNAT + redirect to the pod, past netfilter`, kind: 'bpf', inferred: true });
  }
  if (culprit.culprit.where.startsWith('bridge') || (culprit.culprit.kind === 'socket' && culprit.reason.includes('bridged'))) {
    const reply = received((s) => s.packet.startsWith(`${culprit.packet.src}:`));
    steps.push({ at: (reply?.at ?? 0) - 0.05, where: `node/${culprit.culprit.kind === 'kernel' ? culprit.culprit.node : 'bridge'}`.replace('node/bridge', 'bridge'), hook: 'bridge', packet: short(culprit.packet), action: 'bridged without netfilter: no reverse NAT', kind: 'bridge', culprit: culprit.culprit.kind === 'kernel' || undefined, inferred: true });
  }
  return steps.sort((a, b) => a.at - b.at);
}
