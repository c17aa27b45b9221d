// What every culprit detector reads and returns: the probe's context (its packets, its trace, the phase's
// checks and facts) and a culprit with its packet and a few sentences; and the words they share.
import type { Diagnosis } from '../../../model/diagnosis.ts';
import type { ProbeTraceResult, TraceEvent, TraceFact } from '../../../model/trace-events.ts';
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
}

/** A probe's diagnosis input with what every detector needs resolved: the flow, the client's packets, its own events. */
export interface Ctx extends DiagnosisInput {
  target: { ip: string; port: number };
  client: string;
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
