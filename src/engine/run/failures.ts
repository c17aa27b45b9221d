// What did not hold in a scenario run, one line each: probe mismatches, failed checks, errors.
// The one place reports, scripts and tests read a failure from.
import type { PhaseResult, RunResult, ScenarioResult } from './results.ts';

/** What did not hold in one phase: its error, its probe mismatches and failed checks. */
export function phaseFailures(p: PhaseResult): string[] {
  const where = `${p.variant}/${p.name}`;
  return [
    ...(p.status === 'errored' && p.error ? [`${where} errored: ${p.error.message}`] : []),
    ...p.probes.filter((x) => !x.matched).map((x) => `${where}/${x.id}: ${x.mismatch ?? x.summary}`),
    ...p.checks
      .filter((x) => !x.matched)
      .map((x) => `${where}/check ${x.id}: expected ${x.expected}, observed ${x.observed}`),
  ];
}

export function scenarioFailures(r: ScenarioResult): string[] {
  const phaseErrors = new Set(r.phases.map((p) => p.error?.message));
  return [
    // an error outside any phase (provisioning, say); a phase's own error is listed with its phase
    ...(r.error && !phaseErrors.has(r.error.message) ? [`${r.error.code}: ${r.error.message}`] : []),
    ...r.phases.flatMap(phaseFailures),
  ];
}

export function runFailures(result: RunResult): string[] {
  return result.scenarios.flatMap((s) => scenarioFailures(s).map((line) => `${s.id}/${line}`));
}
