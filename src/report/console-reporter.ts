// Progress on stderr while it runs (a spinner on a terminal, plain lines in CI), summary on stdout.
// Lab logs are buffered and printed only for a scenario that errored.
// Colours are chosen per stream (src/cli/colors.ts): progress by stderr, the summary by stdout.
import { colorsFor, type Colors } from './colors.ts';
import type { PhaseResult, RunEvent, RunResult, ScenarioResult } from '../engine/run/results.ts';
import type { Reporter } from './reporter.ts';
import { diagnosisLines } from './diagnosis-lines.ts';
import { progress } from './progress.ts';
import { countsLine, verdictCounts } from './verdict-counts.ts';

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
/** By name, so a verdict the engine adds later (`measured`) gets its colour without a type change here. */
const verdictColor = (pc: Colors, verdict: string): ((s: string) => string) =>
  (
    ({ passed: pc.green, failed: pc.red, errored: pc.red, skipped: pc.yellow, measured: pc.cyan }) as Record<
      string,
      (s: string) => string
    >
  )[verdict] ?? ((s) => s);

type Formatters = { [K in RunEvent['kind']]: (event: Extract<RunEvent, { kind: K }>) => string | undefined };

const formatters = (pc: Colors): Formatters => ({
  'run-start': (e) => pc.dim(`netrepro: ${e.scenarios.length} scenario(s) on ${e.provider}`),
  'scenario-start': (e) => `${pc.bold('▶')} ${pc.bold(e.id)}  ${pc.dim(e.title)}`,
  'lab-ready': (e) => pc.dim(`  [${e.id}] lab up for fix "${e.variant}" in ${e.ms} ms`),
  'phase-start': (e) => `  [${e.id}] ${pc.cyan(e.phase)}${e.title ? pc.dim(`: ${e.title}`) : ''}`,
  step: (e) =>
    pc.dim(
      `  [${e.id}]   $ ${e.step.on}: ${e.step.argv.join(' ')}${e.step.background ? ' (background)' : ''}${e.step.evidence ? `  -> ${e.step.evidence}` : ''}`,
    ),
  probe: (e) =>
    `  [${e.id}]   ${e.probe.matched ? pc.green('✓') : pc.red('✗')} ${e.probe.id}: ${e.probe.summary}` +
    (e.probe.matched ? '' : `\n  [${e.id}]     ${pc.red(`expectation did not hold: ${e.probe.mismatch}`)}`),
  check: (e) =>
    `  [${e.id}]   ${!e.check.matched ? pc.red('✗') : e.check.reported ? pc.dim('·') : pc.green('✓')} check ${e.check.id} on ${e.check.on}: ${e.check.observed}${e.check.reported && e.check.matched ? pc.dim(' (reported, not asserted)') : ''}` +
    (e.check.matched ? '' : `\n  [${e.id}]     ${pc.red(`expected ${e.check.expected}`)}`),
  'scenario-end': (e) => scenarioEnd(pc, e.result),
  'run-end': () => undefined,
});

function scenarioEnd(pc: Colors, r: ScenarioResult): string {
  const lines = [`${verdictColor(pc, r.verdict)(r.verdict.toUpperCase())} ${r.id} (${seconds(r.durationMs)})`];
  if (r.error) lines.push(pc.red(`  ${r.error.message}`) + (r.error.hint ? pc.dim(`\n  hint: ${r.error.hint}`) : ''));
  if (r.skipReason) lines.push(pc.yellow(`  skipped: ${r.skipReason}`));
  for (const { fix, reason } of r.skippedFixes ?? []) lines.push(pc.yellow(`  fix ${fix} skipped: ${reason}`));
  if (r.verdict === 'failed') lines.push(...failures(pc, r));
  for (const p of r.phases.filter((x) => x.status === 'errored' && x.error))
    lines.push(pc.red(`  ✗ ${p.variant}/${p.name} errored: ${p.error!.message.split('\n')[0]}`));
  if (r.measurements) lines.push(...r.measurements.map((m) => pc.cyan(`  measured ${m}`)));
  // how the lab came up and went down helps with an error; a failure is said by what it expected and observed
  if (r.verdict === 'errored') lines.push(...r.log.map((l) => pc.dim(`  | ${l}`)));
  return lines.join('\n');
}

export interface ConsoleOptions {
  /** Only what did not pass (the scenario's verdict and why) and the summary: no spinner, no step or probe lines. */
  quiet?: boolean;
  /** The run's interrupt: the spinner stops there, and the teardown's lines follow as plain lines. */
  signal?: AbortSignal;
}

export function consoleReporter(
  stderr: NodeJS.WriteStream = process.stderr,
  stdout: NodeJS.WritableStream = process.stdout,
  options: ConsoleOptions = {},
): Reporter {
  const format = formatters(colorsFor(stderr));
  const out = colorsFor(stdout as { isTTY?: boolean });
  const lines = progress(stderr, { spinner: !options.quiet });
  options.signal?.addEventListener('abort', () => lines.stop(), { once: true });
  const shown = (event: RunEvent) =>
    !options.quiet ||
    (event.kind === 'scenario-end' && event.result.verdict !== 'passed' && event.result.verdict !== 'measured');
  return {
    onEvent(event) {
      const line = shown(event) && (format[event.kind] as (e: RunEvent) => string | undefined)(event);
      if (line) lines.print(line);
      if (event.kind === 'run-start') lines.status('provisioning');
      if (event.kind === 'phase-start') lines.status(`${event.id}: ${event.phase}`);
      if (event.kind === 'run-end') lines.stop();
    },
    async onRunEnd(result) {
      stdout.write(summary(result, out));
    },
  };
}

/**
 * What failed and why: each probe or check that did not hold, what it expected and observed, and for a probe the
 * culprit its trace names. Every fix variant runs the same baseline and faulted phases, so the same failure there
 * is printed once, with the variants it failed in.
 */
function failures(pc: Colors, r: ScenarioResult): string[] {
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
    return [`  ${label}: ${pc.red(why)}`, ...diagnosis.map((l) => pc.dim(`    ${l}`))];
  });
}

const mark = (status: string) => (status === 'passed' ? '✓' : status === 'errored' ? '✗(errored)' : '✗');

/**
 * A scenario's phases in a few words. Each fix variant runs baseline, faulted and fixed in its own lab:
 * a phase that went the same way in every variant is said once, otherwise per variant by name.
 */
export function phaseCell(s: ScenarioResult): string {
  const skipped = (s.skippedFixes ?? []).map((f) => f.fix);
  const ran = ranPhases(s);
  return skipped.length > 0 ? `${ran} (fix skipped: ${skipped.join(', ')})` : ran;
}

function ranPhases(s: ScenarioResult): string {
  const variants = [...new Set(s.phases.map((p) => p.variant))];
  if (variants.length <= 1) return s.phases.map((p) => `${p.name}${mark(p.status)}`).join(' ');
  const names = [...new Set(s.phases.map((p) => p.name))];
  return names
    .map((name) => {
      const runs = s.phases.filter((p) => p.name === name);
      const same = runs.every((p) => p.status === runs[0]!.status) && runs.length === variants.length;
      return same && name !== 'fixed'
        ? `${name}${mark(runs[0]!.status)}`
        : `${name}: ${runs.map((p) => `${p.variant}${mark(p.status)}`).join(' ')}`;
    })
    .join(' ');
}

export function summary(result: RunResult, pc: Colors): string {
  const width = Math.max(40, ...result.scenarios.map((s) => s.id.length));
  const rows = result.scenarios.map(
    (s) =>
      `  ${verdictColor(pc, s.verdict)(s.verdict.padEnd(8))} ${s.id.padEnd(width)} ${seconds(s.durationMs).padStart(8)}  ${pc.dim(phaseCell(s))}`,
  );
  return [
    ...rows,
    `${countsLine(verdictCounts(result))} (${seconds(result.durationMs)}, provider ${result.provider})`,
    '',
  ].join('\n');
}
