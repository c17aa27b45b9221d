// `netrepro mutate`: runs every mutant of the chosen scenarios, prints a table and the kill rate, and
// exits 1 when a mutant survived (a verdict that could not fail), could not be judged, or an original failed.
import pc from 'picocolors';
import type { ClusterProvider } from '../../contract/provider.ts';
import type { ScenarioResult } from '../run/results.ts';
import { runLimited } from '../run/run-limited.ts';
import type { LoadedScenario } from '../../model/load-scenario.ts';
import { killRate, mutateScenario, type MutantResult, type Retry, type ScenarioMutants } from './mutate-scenario.ts';

export interface MutateRun {
  mutants: MutantResult[];
  /** Scenarios whose unmutated run did not pass: their mutants are listed as not judged. */
  originalFailures: { scenario: string; reason: string }[];
  /** Labs run again once because a phase before the judged one did not hold. */
  retries: Retry[];
  killRate: number;
  durationMs: number;
}

export async function mutateAll(
  scenarios: readonly LoadedScenario[],
  options: {
    provider: ClusterProvider;
    signal: AbortSignal;
    parallel: number;
    onMutant?: (m: MutantResult) => void;
    originals?: readonly ScenarioResult[];
  },
): Promise<MutateRun> {
  const started = performance.now();
  const perScenario: ScenarioMutants[] = new Array(scenarios.length);
  await runLimited(scenarios, options.parallel, options.signal, async (loaded, i) => {
    // a run of the unmutated scenario already made (npm test's suite run) is reused, not run again
    const original = options.originals?.find((r) => r.id === loaded.scenario.id);
    perScenario[i] = await mutateScenario(loaded, {
      provider: options.provider,
      signal: options.signal,
      onMutant: options.onMutant,
      original,
    });
  });
  const done = perScenario.filter(Boolean);
  const mutants = done.flatMap((s) => s.mutants);
  const originalFailures = done.flatMap((s) =>
    s.originalFailure ? [{ scenario: s.scenario, reason: s.originalFailure }] : [],
  );
  return {
    mutants,
    originalFailures,
    retries: done.flatMap((s) => s.retries),
    killRate: killRate(mutants),
    durationMs: Math.round(performance.now() - started),
  };
}

/** Passed: every mutant judged and killed, every original passed. */
export function mutatePassed(run: MutateRun): boolean {
  return run.originalFailures.length === 0 && run.mutants.every((m) => m.status === 'killed');
}

const MARK = { killed: 'killed', survived: 'SURVIVED', 'not-judged': 'UNJUDGED' } as const;
const paint = (m: MutantResult) => (m.status === 'killed' ? pc.green : m.status === 'survived' ? pc.red : pc.yellow);

export function mutantLine(m: MutantResult): string {
  return `${paint(m)(MARK[m.status].padEnd(8))} ${m.scenario} ${pc.bold(m.mutation)}: ${pc.dim(m.reason.length > 160 ? `${m.reason.slice(0, 157)}...` : m.reason)}`;
}

export function mutateTable(run: MutateRun): string {
  const width = Math.max(8, ...run.mutants.map((m) => m.scenario.length));
  const mwidth = Math.max(8, ...run.mutants.map((m) => m.mutation.length));
  const rows = run.mutants.map(
    (m) => `  ${paint(m)(MARK[m.status].padEnd(8))} ${m.scenario.padEnd(width)} ${m.mutation.padEnd(mwidth)}`,
  );
  const count = (s: MutantResult['status']) => run.mutants.filter((m) => m.status === s).length;
  const judged = run.mutants.length - count('not-judged');
  return [
    `  ${'result'.padEnd(8)} ${'scenario'.padEnd(width)} ${'mutation'.padEnd(mwidth)}`,
    ...rows,
    // an original that failed is its own line: its mutants could not be judged, none of them survived
    ...run.originalFailures.map((f) =>
      pc.red(`original FAILED ${f.scenario}: ${f.reason.split('\n')[0]} (its mutants are not judged)`),
    ),
    // how often a lab was run again: under load a history phase can lose a race its original won
    ...run.retries.map((r) =>
      pc.yellow(
        `retried ${r.scenario} ${r.lab}: ${r.first.replace(/^not judged: /, '')}; ${r.judged ? 'judged on the retry' : 'not judged on the retry either'}`,
      ),
    ),
    `kill rate ${(run.killRate * 100).toFixed(1)}%: ${count('killed')} of ${judged} judged mutants killed${count('not-judged') ? `, ${count('not-judged')} not judged` : ''}${run.retries.length ? `; ${run.retries.length} lab(s) retried` : ''} (${(run.durationMs / 1000).toFixed(1)} s)`,
    '',
  ].join('\n');
}

/** The --json file's text: the mutants and the kill rate. */
export function mutateJson(run: MutateRun): string {
  const { mutants, originalFailures, retries, killRate: rate, durationMs } = run;
  return `${JSON.stringify({ version: 1, mutants, originalFailures, retries, killRate: rate, durationMs }, null, 2)}\n`;
}
