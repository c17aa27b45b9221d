// The regression gate: every scenario's trigger under a baseline and a candidate profile, and the
// difference: which incidents an upgrade opens (regression) or closes (improvement).
import type { ClusterProvider } from '../../clusters/provider.ts';
import { runScenario } from '../engine/run-scenario.ts';
import type { LoadedScenario } from '../model/load-scenario.ts';
import { applyProfile, type Profile } from '../model/profile.ts';
import { assess, type Assessment, type Susceptibility } from './susceptibility.ts';

export type Change = 'regression' | 'improvement' | 'unchanged';

export interface GateRow {
  id: string;
  baseline: Susceptibility;
  candidate: Susceptibility;
  change: Change;
  baselineReason: string;
  candidateReason: string;
}

export interface GateResult {
  baseline: string;
  candidate: string;
  durationMs: number;
  scenarios: GateRow[];
}

export function change(baseline: Susceptibility, candidate: Susceptibility): Change {
  if (baseline === 'immune' && candidate === 'susceptible') return 'regression';
  if (baseline === 'susceptible' && candidate === 'immune') return 'improvement';
  return 'unchanged';
}

export interface GateOptions {
  provider: ClusterProvider;
  signal: AbortSignal;
  /** One call per scenario and profile, as soon as it is known. */
  onAssessed?: (profile: string, id: string, assessment: Assessment) => void;
  parallel?: number;
}

export async function runGate(scenarios: readonly LoadedScenario[], baseline: Profile, candidate: Profile, options: GateOptions): Promise<GateResult> {
  const started = performance.now();
  const jobs = scenarios.flatMap((s) => [baseline, candidate].map((profile) => ({ s, profile })));
  const verdicts = new Map<string, Assessment>();
  let next = 0;
  const worker = async () => {
    while (next < jobs.length && !options.signal.aborted) {
      const { s, profile } = jobs[next++]!;
      if (s.scenario.purpose === 'measure') {
        const assessment = { verdict: 'not-applicable' as const, reason: 'a measurement: its faulted phase reports a rate and asserts no symptom' };
        verdicts.set(`${profile.name}/${s.scenario.id}`, assessment);
        options.onAssessed?.(profile.name, s.scenario.id, assessment);
        continue;
      }
      const scenario = applyProfile(s.scenario, profile);
      const result = await runScenario({ file: s.file, scenario }, { provider: options.provider, signal: options.signal, emit: () => {}, faultOnly: true });
      const assessment = assess(result);
      verdicts.set(`${profile.name}/${s.scenario.id}`, assessment);
      options.onAssessed?.(profile.name, s.scenario.id, assessment);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.parallel ?? 1, jobs.length)) }, worker));
  return {
    baseline: baseline.name,
    candidate: candidate.name,
    durationMs: Math.round(performance.now() - started),
    scenarios: scenarios.map(({ scenario }) => {
      const b = verdicts.get(`${baseline.name}/${scenario.id}`) ?? { verdict: 'not-applicable' as const, reason: 'not run (interrupted)' };
      const c = verdicts.get(`${candidate.name}/${scenario.id}`) ?? { verdict: 'not-applicable' as const, reason: 'not run (interrupted)' };
      return { id: scenario.id, baseline: b.verdict, candidate: c.verdict, change: change(b.verdict, c.verdict), baselineReason: b.reason, candidateReason: c.reason };
    }),
  };
}
