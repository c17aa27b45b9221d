// What did not hold in a scenario run, one line each: probe mismatches, failed checks, errors.
// The one place reports, scripts and tests read a failure from.
import type { RunResult, ScenarioResult } from './results.ts';

export function scenarioFailures(r: ScenarioResult): string[] {
  return [
    ...(r.error ? [`${r.error.code}: ${r.error.message}`] : []),
    ...r.phases.filter((p) => p.status === 'errored' && p.error && p.error.message !== r.error?.message).map((p) => `${p.variant}/${p.name} errored: ${p.error!.message}`),
    ...r.phases.flatMap((p) => p.probes.filter((x) => !x.matched).map((x) => `${p.variant}/${p.name}/${x.id}: ${x.mismatch ?? x.summary}`)),
    ...r.phases.flatMap((p) => p.checks.filter((x) => !x.matched).map((x) => `${p.variant}/${p.name}/check ${x.id}: expected ${x.expected}, observed ${x.observed}`)),
  ];
}

export function runFailures(result: RunResult): string[] {
  return result.scenarios.flatMap((s) => scenarioFailures(s).map((line) => `${s.id}/${line}`));
}
