// Repeated probes: N runs of one probe folded into one Observation that carries the distribution
// of outcomes (and of who answered), so an expectation can assert a count or a rate. Pure.
import type { Observation, Outcome } from '../../model/outcome.ts';

/** One run of a repeated probe: its observation without the bulky detail. */
export type RunSummary = Omit<Observation, 'detail'>;

export interface Distribution {
  runs: number;
  /** Runs per outcome, most frequent first. */
  outcomes: Partial<Record<Outcome, number>>;
  /** Runs per pod that answered (runs nobody answered are not counted). */
  servedBy: Record<string, number>;
}

export function distribution(runs: readonly RunSummary[]): Distribution {
  const tally = <K extends string>(keys: (K | undefined)[]) => {
    const counts = new Map<K, number>();
    for (const k of keys) if (k !== undefined) counts.set(k, (counts.get(k) ?? 0) + 1);
    return Object.fromEntries([...counts].sort((a, b) => b[1] - a[1])) as Record<K, number>;
  };
  return {
    runs: runs.length,
    outcomes: tally(runs.map((r) => r.outcome)),
    servedBy: tally(runs.map((r) => r.servedBy)),
  };
}

export function describeDistribution(d: Distribution): string {
  const outcomes = Object.entries(d.outcomes)
    .map(([o, n]) => `${n} ${o}`)
    .join(', ');
  const served = Object.entries(d.servedBy)
    .map(([p, n]) => `${p} ${n}`)
    .join(', ');
  return `${d.runs} runs: ${outcomes}${served ? `; served by ${served}` : ''}`;
}

/** One Observation for the whole series: the most frequent outcome, the distribution and every run in `detail`. */
export function foldRuns(label: string, observations: readonly Observation[], wallMs: number): Observation {
  const runs: RunSummary[] = observations.map((o) => ({
    outcome: o.outcome,
    summary: o.summary,
    servedBy: o.servedBy,
    clientAddress: o.clientAddress,
    source: o.source,
    connected: o.connected,
    sentTo: o.sentTo,
    answers: o.answers,
    durationMs: o.durationMs,
  }));
  const d = distribution(runs);
  const top = (Object.keys(d.outcomes)[0] ?? 'error') as Outcome;
  const same = <T>(values: T[]) => (values.every((v) => v === values[0]) ? values[0] : undefined);
  // one example per outcome class, with its packets and detail: the evidence behind each class
  const examples: Record<string, unknown> = {};
  for (const o of observations) examples[o.outcome] ??= { summary: o.summary, ...o.detail };
  return {
    outcome: top,
    summary: `${label} = ${describeDistribution(d)}`,
    servedBy: same(runs.map((r) => r.servedBy)),
    clientAddress: same(runs.map((r) => r.clientAddress)),
    source: same(runs.map((r) => r.source)),
    durationMs: Math.round(wallMs),
    detail: { distribution: d, runs, examples },
  };
}

/** The per-run summaries of a folded Observation, or undefined for a single run. */
export function runsOf(o: Observation): RunSummary[] | undefined {
  const runs = (o.detail as { runs?: unknown }).runs;
  return Array.isArray(runs) && (o.detail as { distribution?: unknown }).distribution
    ? (runs as RunSummary[])
    : undefined;
}

/** Runs `task` for i = 0..n-1, at most `parallel` at a time; results in index order. */
export async function pooled<T>(n: number, parallel: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(n);
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      results[i] = await task(i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(parallel, n)) }, worker));
  return results;
}
