// Runs a set of scenarios, `parallel` at a time, and gathers the run result. With parallel > 1 a
// scenario also runs its fix variants side by side, each in its own lab: a netns lab spends most of its
// time waiting on the wire (timeouts, series), so 2 scenarios of 4 variants keep 2 cores busier
// than 2 labs would. Where a lab is a whole cluster, `parallel` bounds the run's labs instead: the
// variants share one pool of that size. parallel 1 runs everything one lab at a time (the mode to read a log in).
import type { ClusterProvider } from '../../contract/provider.ts';
import type { LoadedScenario } from '../../model/load-scenario.ts';
import type { RunEvent, RunResult, ScenarioResult } from './results.ts';
import { LabSlots } from './lab-slots.ts';
import { runLimited } from './run-limited.ts';
import { runScenario } from './run-scenario.ts';

export interface SuiteOptions {
  provider: ClusterProvider;
  reportDir?: string;
  parallel?: number;
  signal: AbortSignal;
  emit: (event: RunEvent) => void;
  keep?: boolean;
  /** Once a scenario fails or errors, start no other (those under way still finish). */
  failFast?: boolean;
  /** The last phase each lab runs (run-scenario.ts, stopAfterPlan). */
  stopAfter?: string;
}

export async function runSuite(scenarios: readonly LoadedScenario[], options: SuiteOptions): Promise<RunResult> {
  const started = performance.now();
  options.emit({ kind: 'run-start', provider: options.provider.name, scenarios: scenarios.map((s) => s.scenario.id) });
  const results: ScenarioResult[] = new Array(scenarios.length);
  const parallel = options.parallel ?? 1;
  const stopStarting = new AbortController();
  const clusters = options.provider.labsAreClusters ? new LabSlots(parallel) : undefined;
  await runLimited(scenarios, parallel, AbortSignal.any([options.signal, stopStarting.signal]), async (scenario, i) => {
    const slots = clusters ?? new LabSlots(parallel > 1 ? scenario.scenario.fixes.length : 1);
    results[i] = await runScenario(scenario, { ...options, slots });
    if (options.failFast && (results[i].verdict === 'failed' || results[i].verdict === 'errored')) stopStarting.abort();
  });
  const done = results.filter(Boolean);
  const count = (v: ScenarioResult['verdict']) => done.filter((r) => r.verdict === v).length;
  const result: RunResult = {
    version: 1,
    provider: options.provider.name,
    durationMs: Math.round(performance.now() - started),
    summary: {
      passed: count('passed'),
      measured: count('measured'),
      failed: count('failed'),
      errored: count('errored'),
      skipped: count('skipped'),
    },
    scenarios: done,
  };
  options.emit({ kind: 'run-end', result });
  return result;
}
