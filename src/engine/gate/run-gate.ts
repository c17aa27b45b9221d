// The regression gate: every scenario's trigger under a baseline and a candidate profile, and the
// difference: which incidents an upgrade opens (regression) or closes (improvement).
import type { ClusterProvider } from '../../contract/provider.ts';
import { runLimited } from '../run/run-limited.ts';
import { runScenario } from '../run/run-scenario.ts';
import type { LoadedScenario } from '../../model/load-scenario.ts';
import { applyProfile, type Profile } from '../../model/profile.ts';
import { assess, type Assessment, type Susceptibility } from './susceptibility.ts';

/** unjudged: one side could not be judged; the gate fails rather than guess. */
export type Change = 'regression' | 'improvement' | 'unchanged' | 'unjudged';

export interface GateRow {
  id: string;
  baseline: Susceptibility;
  candidate: Susceptibility;
  change: Change;
  baselineReason: string;
  candidateReason: string;
  /** The probes (and `check ID`s) whose results decided each side's verdict. */
  baselineDecidedBy: string[];
  candidateDecidedBy: string[];
}

export interface GateResult {
  baseline: string;
  candidate: string;
  durationMs: number;
  scenarios: GateRow[];
}

/** A broken side (neither symptom nor health) is worse than any judged one; broken on both sides tells nothing. */
export function change(baseline: Susceptibility, candidate: Susceptibility): Change {
  if (baseline === 'unjudged' || candidate === 'unjudged') return 'unjudged';
  if (candidate === 'broken') return baseline === 'broken' ? 'unjudged' : 'regression';
  if (baseline === 'broken') return candidate === 'immune' ? 'improvement' : 'unjudged';
  if (baseline === 'immune' && candidate === 'susceptible') return 'regression';
  if (baseline === 'susceptible' && candidate === 'immune') return 'improvement';
  return 'unchanged';
}

export interface GateOptions {
  /**
   * One provider for both profiles, or the provider for each profile: a real provider takes the
   * profile's `real` versions (its Kubernetes release) from its run configuration.
   */
  provider: ClusterProvider | ((profile: Profile) => Promise<ClusterProvider>);
  signal: AbortSignal;
  /** One call per scenario and profile, as soon as it is known. */
  onAssessed?: (profile: string, id: string, assessment: Assessment) => void;
  parallel?: number;
}

export async function runGate(
  scenarios: readonly LoadedScenario[],
  baseline: Profile,
  candidate: Profile,
  options: GateOptions,
): Promise<GateResult> {
  const started = performance.now();
  const jobs = scenarios.flatMap((s) => [baseline, candidate].map((profile) => ({ s, profile })));
  const verdicts = new Map<string, Assessment>();
  const { provider } = options;
  const providers = new Map<string, Promise<ClusterProvider>>();
  const providerFor = (profile: Profile) => {
    if (typeof provider !== 'function') return Promise.resolve(provider);
    if (!providers.has(profile.name)) providers.set(profile.name, provider(profile));
    return providers.get(profile.name)!;
  };
  await runLimited(jobs, options.parallel ?? 1, options.signal, async ({ s, profile }) => {
    const scenario = applyProfile(s.scenario, profile);
    const assessment: Assessment =
      scenario.purpose === 'measure' || scenario.purpose === 'replay'
        ? {
            verdict: 'not-applicable',
            reason:
              scenario.purpose === 'measure'
                ? 'a measurement: its faulted phase reports a rate and asserts no symptom'
                : 'a replay: its captured state is the fault, the same under every profile',
            decidedBy: [],
          }
        : assess(
            await runScenario(
              { file: s.file, scenario },
              { provider: await providerFor(profile), signal: options.signal, emit: () => {}, faultOnly: true },
            ),
            scenario,
          );
    verdicts.set(`${profile.name}/${s.scenario.id}`, assessment);
    options.onAssessed?.(profile.name, s.scenario.id, assessment);
  });
  return {
    baseline: baseline.name,
    candidate: candidate.name,
    durationMs: Math.round(performance.now() - started),
    scenarios: scenarios.map(({ scenario }) => {
      const notRun: Assessment = { verdict: 'not-applicable', reason: 'not run (interrupted)', decidedBy: [] };
      const b = verdicts.get(`${baseline.name}/${scenario.id}`) ?? notRun;
      const c = verdicts.get(`${candidate.name}/${scenario.id}`) ?? notRun;
      return {
        id: scenario.id,
        baseline: b.verdict,
        candidate: c.verdict,
        change: change(b.verdict, c.verdict),
        baselineReason: b.reason,
        candidateReason: c.reason,
        baselineDecidedBy: b.decidedBy,
        candidateDecidedBy: c.decidedBy,
      };
    }),
  };
}
