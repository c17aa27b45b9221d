// What a finished scenario says on the console: one line while the run goes on, and for one that did not pass
// the whole story (what each phase expected and observed, the culprit, the command that reproduces it).
import type { Colors } from './colors.ts';
import type { PhaseResult, ScenarioResult } from '../engine/run/results.ts';
import { diagnosisLines } from './diagnosis-lines.ts';

export const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/** By name, so a verdict the engine adds later gets its colour without a type change here. */
export const verdictColor = (pc: Colors, verdict: string): ((s: string) => string) =>
  (
    ({ passed: pc.green, failed: pc.red, errored: pc.red, skipped: pc.yellow, measured: pc.cyan }) as Record<
      string,
      (s: string) => string
    >
  )[verdict] ?? ((s) => s);

const MARKS: Record<string, string> = { passed: '✓', failed: '✗', errored: '✗', skipped: '-', measured: '◆' };

/** One line: the verdict's mark, the id, the time, and for anything but a pass the first reason. */
export function outcomeLine(pc: Colors, r: ScenarioResult): string {
  const color = verdictColor(pc, r.verdict);
  const why =
    r.verdict === 'failed'
      ? failures(pc, r, false)[0]?.trim()
      : r.verdict === 'errored'
        ? `errored: ${r.error?.message.split('\n')[0] ?? 'see the recap below'}`
        : r.verdict === 'skipped'
          ? `skipped: ${r.skipReason ?? ''}`
          : r.verdict === 'measured'
            ? `measured ${r.measurements?.[0] ?? ''}${(r.measurements?.length ?? 0) > 1 ? ` (+${r.measurements!.length - 1})` : ''}`
            : '';
  const head = `${color(MARKS[r.verdict] ?? '?')} ${r.id} ${pc.dim(`(${seconds(r.durationMs)})`)}`;
  return why ? `${head}  ${r.verdict === 'skipped' || r.verdict === 'measured' ? color(why) : why}` : head;
}

/** The whole story of a scenario: its verdict, why, the culprit, what was skipped, and how to run it again. */
export function outcomeBlock(pc: Colors, r: ScenarioResult, reproduce?: string): string {
  const lines = [`${verdictColor(pc, r.verdict)(r.verdict.toUpperCase())} ${r.id} (${seconds(r.durationMs)})`];
  if (r.error) lines.push(pc.red(`  ${r.error.message}`) + (r.error.hint ? pc.dim(`\n  hint: ${r.error.hint}`) : ''));
  if (r.skipReason) lines.push(pc.yellow(`  skipped: ${r.skipReason}`));
  for (const { fix, reason } of r.skippedFixes ?? []) lines.push(pc.yellow(`  fix ${fix} skipped: ${reason}`));
  if (r.verdict === 'failed') lines.push(...failures(pc, r, true));
  for (const p of r.phases.filter((x) => x.status === 'errored' && x.error))
    lines.push(pc.red(`  ✗ ${p.variant}/${p.name} errored: ${p.error!.message.split('\n')[0]}`));
  if (r.measurements) lines.push(...r.measurements.map((m) => pc.cyan(`  measured ${m}`)));
  // how the lab came up and went down helps with an error; a failure is said by what it expected and observed
  if (r.verdict === 'errored') lines.push(...r.log.map((l) => pc.dim(`  | ${l}`)));
  if (reproduce && (r.verdict === 'failed' || r.verdict === 'errored')) lines.push(pc.dim(`  reproduce: ${reproduce}`));
  return lines.join('\n');
}

/**
 * What failed and why: each probe or check that did not hold, what it expected and observed, and for a probe the
 * culprit its trace names. Every fix variant runs the same baseline and faulted phases, so the same failure there
 * is printed once, with the variants it failed in.
 */
function failures(pc: Colors, r: ScenarioResult, withDiagnosis: boolean): string[] {
  const variants = new Set(r.phases.map((p) => p.variant)).size;
  const seen = new Map<string, { phase: string; what: string; where: string[]; why: string; diagnosis: string[] }>();
  const add = (phase: PhaseResult, what: string, why: string, diagnosis: string[]) => {
    // the observation's own numbers (ports, times) differ from variant to variant: the first line of it says which failure
    const key = `${phase.name}\0${what}\0${diagnosis[0] ?? why.split(':')[0]}`;
    const entry = seen.get(key) ?? seen.set(key, { phase: phase.name, what, where: [], why, diagnosis }).get(key)!;
    entry.where.push(phase.variant);
  };
  for (const phase of r.phases) {
    for (const probe of phase.probes.filter((p) => !p.matched))
      add(
        phase,
        probe.id,
        probe.mismatch ?? `expected ${probe.expected}, observed ${probe.summary}`,
        diagnosisLines(probe),
      );
    for (const check of phase.checks.filter((c) => !c.matched))
      add(phase, `check ${check.id} on ${check.on}`, `expected ${check.expected}, observed ${check.observed}`, []);
  }
  return [...seen.values()].flatMap(({ phase, what, where, why, diagnosis }) => {
    const label =
      variants === 1
        ? `${phase} ${what}`
        : `${phase} ${what} (${where.length === variants ? 'every fix variant' : where.join(', ')})`;
    if (!withDiagnosis) return [`${label}: ${pc.red(why.split(': ')[0]!)}`];
    return [`  ${label}: ${pc.red(why)}`, ...diagnosis.map((l) => pc.dim(`    ${l}`))];
  });
}
