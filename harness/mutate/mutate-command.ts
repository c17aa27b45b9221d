// `netrepro mutate`: runs every mutant of the chosen scenarios, prints a table and the kill rate, and
// exits 1 when a mutant survived (a verdict that could not fail) or could not be judged.
import pc from 'picocolors';
import type { ClusterProvider } from '../../clusters/provider.ts';
import type { ScenarioResult } from '../engine/results.ts';
import { runLimited } from '../engine/run-limited.ts';
import type { LoadedScenario } from '../model/load-scenario.ts';
import { killRate, mutateScenario, type MutantResult } from './mutate-scenario.ts';

export interface MutateRun {
  mutants: MutantResult[];
  killRate: number;
  durationMs: number;
}

export async function mutateAll(
  scenarios: readonly LoadedScenario[],
  options: { provider: ClusterProvider; signal: AbortSignal; parallel: number; onMutant?: (m: MutantResult) => void; originals?: readonly ScenarioResult[] },
): Promise<MutateRun> {
  const started = performance.now();
  const perScenario: MutantResult[][] = new Array(scenarios.length);
  await runLimited(scenarios, options.parallel, options.signal, async (loaded, i) => {
    // a run of the unmutated scenario already made (npm test's suite run) is reused, not run again
    const original = options.originals?.find((r) => r.id === loaded.scenario.id);
    perScenario[i] = await mutateScenario(loaded, { provider: options.provider, signal: options.signal, onMutant: options.onMutant, original });
  });
  const mutants = perScenario.flat();
  return { mutants, killRate: killRate(mutants), durationMs: Math.round(performance.now() - started) };
}

export function mutantLine(m: MutantResult): string {
  const mark = m.killed ? pc.green('killed  ') : pc.red('SURVIVED');
  return `${mark} ${m.scenario} ${pc.bold(m.mutation)}: ${pc.dim(m.reason.length > 160 ? `${m.reason.slice(0, 157)}...` : m.reason)}`;
}

export function mutateTable(run: MutateRun): string {
  const width = Math.max(8, ...run.mutants.map((m) => m.scenario.length));
  const mwidth = Math.max(8, ...run.mutants.map((m) => m.mutation.length));
  const rows = run.mutants.map((m) => `  ${(m.killed ? pc.green : pc.red)((m.killed ? 'killed' : 'SURVIVED').padEnd(8))} ${m.scenario.padEnd(width)} ${m.mutation.padEnd(mwidth)}`);
  const killed = run.mutants.filter((m) => m.killed).length;
  return [
    `  ${'result'.padEnd(8)} ${'scenario'.padEnd(width)} ${'mutation'.padEnd(mwidth)}`,
    ...rows,
    `kill rate ${(run.killRate * 100).toFixed(1)}%: ${killed} of ${run.mutants.length} mutants killed (${(run.durationMs / 1000).toFixed(1)} s)`,
    '',
  ].join('\n');
}

/** The --json file's text: the mutants and the kill rate. */
export function mutateJson(run: MutateRun): string {
  return JSON.stringify({ version: 1, mutants: run.mutants, killRate: run.killRate, durationMs: run.durationMs }, null, 2) + '\n';
}
