// Runs a set of scenarios, `parallel` at a time, each in its own lab, and gathers the run result.
import type { ClusterProvider } from '../../clusters/provider.ts';
import type { LoadedScenario } from '../model/load-scenario.ts';
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
}

export async function runSuite(scenarios: readonly LoadedScenario[], options: SuiteOptions): Promise<RunResult> {
  const started = performance.now();
  options.emit({ kind: 'run-start', provider: options.provider.name, scenarios: scenarios.map((s) => s.scenario.id) });
  const results: ScenarioResult[] = new Array(scenarios.length);
  // at most `parallel` labs at once: scenarios and the fix variants inside them share the slots
  const slots = new LabSlots(options.parallel ?? 1);
  await runLimited(scenarios, options.parallel ?? 1, options.signal, async (scenario, i) => {
    results[i] = await runScenario(scenario, { ...options, slots });
  });
  const done = results.filter(Boolean);
  const count = (v: ScenarioResult['verdict']) => done.filter((r) => r.verdict === v).length;
  const result: RunResult = {
    version: 1,
    provider: options.provider.name,
    durationMs: Math.round(performance.now() - started),
    summary: { passed: count('passed'), measured: count('measured'), failed: count('failed'), errored: count('errored'), skipped: count('skipped') },
    scenarios: done,
  };
  options.emit({ kind: 'run-end', result });
  return result;
}
