// Progress on stderr while it runs (a spinner on a terminal, plain lines in CI), summary on stdout.
// Lab logs are buffered and printed only for a scenario that did not pass.
// Colours are chosen per stream (src/cli/colors.ts): progress by stderr, the summary by stdout.
import ora, { type Ora } from 'ora';
import { colorsFor, type Colors } from './colors.ts';
import type { RunEvent, RunResult, ScenarioResult } from '../engine/run/results.ts';
import type { Reporter } from './reporter.ts';
import { diagnosisLines } from './diagnosis-lines.ts';
import { countsLine, verdictCounts } from './verdict-counts.ts';

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
/** By name, so a verdict the engine adds later (`measured`) gets its colour without a type change here. */
const verdictColor = (pc: Colors, verdict: string): ((s: string) => string) =>
  (({ passed: pc.green, failed: pc.red, errored: pc.red, skipped: pc.yellow, measured: pc.cyan }) as Record<string, (s: string) => string>)[verdict] ?? ((s) => s);

type Formatters = { [K in RunEvent['kind']]: (event: Extract<RunEvent, { kind: K }>) => string | undefined };

const formatters = (pc: Colors): Formatters => ({
  'run-start': (e) => pc.dim(`netrepro: ${e.scenarios.length} scenario(s) on ${e.provider}`),
  'scenario-start': (e) => `${pc.bold('▶')} ${pc.bold(e.id)}  ${pc.dim(e.title)}`,
  'lab-ready': (e) => pc.dim(`  [${e.id}] lab up for fix "${e.variant}" in ${e.ms} ms`),
  'phase-start': (e) => `  [${e.id}] ${pc.cyan(e.phase)}${e.title ? pc.dim(`: ${e.title}`) : ''}`,
  step: (e) => pc.dim(`  [${e.id}]   $ ${e.step.on}: ${e.step.argv.join(' ')}${e.step.background ? ' (background)' : ''}${e.step.evidence ? `  -> ${e.step.evidence}` : ''}`),
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
  if (r.verdict === 'failed') {
    // why each failing probe ended as it did: the culprit its trace names
    for (const phase of r.phases) {
      for (const probe of phase.probes.filter((p) => !p.matched)) {
        const diagnosis = diagnosisLines(probe);
        if (diagnosis.length) lines.push(`  ${phase.variant}/${phase.name} ${probe.id}: ${diagnosis[0]}`, ...diagnosis.slice(1).map((l) => pc.dim(`    ${l}`)));
      }
    }
  }
  for (const p of r.phases.filter((x) => x.status === 'errored' && x.error)) lines.push(pc.red(`  ✗ ${p.variant}/${p.name} errored: ${p.error!.message.split('\n')[0]}`));
  if (r.measurements) lines.push(...r.measurements.map((m) => pc.cyan(`  measured ${m}`)));
  if (r.verdict === 'failed' || r.verdict === 'errored') lines.push(...r.log.map((l) => pc.dim(`  | ${l}`)));
  return lines.join('\n');
}

export function consoleReporter(stderr: NodeJS.WriteStream = process.stderr, stdout: NodeJS.WritableStream = process.stdout): Reporter {
  const format = formatters(colorsFor(stderr));
  const out = colorsFor(stdout as { isTTY?: boolean });
  const spinner: Ora | undefined = stderr.isTTY && !process.env.CI ? ora({ stream: stderr }) : undefined;
  const print = (line: string) => {
    spinner?.clear();
    stderr.write(`${line}\n`);
    spinner?.render();
  };
  return {
    onEvent(event) {
      const line = (format[event.kind] as (e: RunEvent) => string | undefined)(event);
      if (line) print(line);
      if (event.kind === 'run-start') spinner?.start('provisioning');
      if (event.kind === 'phase-start') spinner && (spinner.text = `${event.id}: ${event.phase}`);
      if (event.kind === 'run-end') spinner?.stop();
    },
    async onRunEnd(result) {
      stdout.write(summary(result, out));
    },
  };
}

export function summary(result: RunResult, pc: Colors): string {
  const rows = result.scenarios.map((s) => {
    const phases = s.phases.map((p) => `${p.name}${p.status === 'passed' ? '✓' : p.status === 'errored' ? '✗(errored)' : '✗'}`).join(' ');
    return `  ${verdictColor(pc, s.verdict)(s.verdict.padEnd(8))} ${s.id.padEnd(40)} ${seconds(s.durationMs).padStart(8)}  ${pc.dim(phases)}`;
  });
  return [...rows, `${countsLine(verdictCounts(result))} (${seconds(result.durationMs)}, provider ${result.provider})`, ''].join('\n');
}
