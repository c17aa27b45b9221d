// The run result when the environment cannot run a lab at all (exit 3): every selected scenario
// errored with the reason, so --json, --junit and --markdown still show CI what happened.
import type { LoadedScenario } from '../../model/load-scenario.ts';
import type { HarnessError } from '../../model/errors.ts';
import type { RunResult, ScenarioResult } from './results.ts';

export function unusableRun(scenarios: readonly LoadedScenario[], provider: string, error: HarnessError): RunResult {
  const results: ScenarioResult[] = scenarios.map(({ file, scenario }) => ({
    id: scenario.id,
    title: scenario.title,
    file,
    verdict: 'errored',
    durationMs: 0,
    phases: [],
    labs: [],
    error: { code: error.code, message: error.message, hint: error.hint },
    log: [],
  }));
  const summary = { passed: 0, measured: 0, failed: 0, errored: results.length, skipped: 0 };
  return { version: 1, provider, durationMs: 0, summary, scenarios: results };
}
