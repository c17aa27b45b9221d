// The console while a run goes on, as a test runner's: a line per finished scenario on stderr (on a terminal,
// under the count done, a live line per running scenario with its phase and time), then a recap of every
// scenario that did not pass with its whole story, then the summary table on stdout. --verbose adds each lab,
// phase, step, probe and check as it happens, prefixed by the scenario and, where it has several, the fix
// variant; --quiet keeps only the recap and the summary.
// Colours are chosen per stream (src/report/colors.ts): progress by stderr, the summary by stdout.
import { colorsFor, type Colors } from './colors.ts';
import type { RunEvent, ScenarioResult } from '../engine/run/results.ts';
import { fitWidth } from './fit-width.ts';
import type { Reporter } from './reporter.ts';
import { progress } from './progress.ts';
import { RunningScenarios } from './running-scenarios.ts';
import { outcomeBlock, outcomeLine } from './scenario-outcome.ts';
import { summary } from './summary-table.ts';

export { phaseCell, summary } from './summary-table.ts';

type Detail = Extract<RunEvent, { kind: 'lab-ready' | 'phase-start' | 'step' | 'probe' | 'check' }>;

/** `[id]`, or `[id/variant]` for a scenario with several fix variants, whose labs run side by side. */
const prefix = (e: Detail, variants: Map<string, number>) =>
  (variants.get(e.id) ?? 0) > 1 ? `[${e.id}/${e.variant}]` : `[${e.id}]`;

function detailLine(pc: Colors, e: Detail, at: string): string {
  switch (e.kind) {
    case 'lab-ready':
      return pc.dim(`  ${at} lab up for fix "${e.variant}" in ${e.ms} ms`);
    case 'phase-start':
      return `  ${at} ${pc.cyan(e.phase)}${e.title ? pc.dim(`: ${e.title}`) : ''}`;
    case 'step':
      return pc.dim(
        `  ${at}   $ ${e.step.on}: ${e.step.argv.join(' ')}${e.step.background ? ' (background)' : ''}${e.step.evidence ? `  -> ${e.step.evidence}` : ''}`,
      );
    case 'probe':
      return (
        `  ${at}   ${e.probe.matched ? pc.green('✓') : pc.red('✗')} ${e.probe.id}: ${e.probe.summary}` +
        (e.probe.matched ? '' : `\n  ${at}     ${pc.red(`expectation did not hold: ${e.probe.mismatch}`)}`)
      );
    case 'check':
      return (
        `  ${at}   ${!e.check.matched ? pc.red('✗') : e.check.reported ? pc.dim('·') : pc.green('✓')} check ${e.check.id} on ${e.check.on}: ${e.check.observed}${e.check.reported && e.check.matched ? pc.dim(' (reported, not asserted)') : ''}` +
        (e.check.matched ? '' : `\n  ${at}     ${pc.red(`expected ${e.check.expected}`)}`)
      );
  }
}

export interface ConsoleOptions {
  /** Only the recap of what did not pass and the summary: no spinner, no line per scenario. */
  quiet?: boolean;
  /** Every lab, phase, step, probe and check as it happens, and each scenario's whole story as it ends. */
  verbose?: boolean;
  /** The run's interrupt: the spinner stops there, and the teardown's lines follow as plain lines. */
  signal?: AbortSignal;
  /** The command that runs a scenario again as this run did, shown under each failure in the recap. */
  reproduce?: (r: ScenarioResult) => string;
}

export function consoleReporter(
  stderr: NodeJS.WriteStream = process.stderr,
  stdout: NodeJS.WritableStream = process.stdout,
  options: ConsoleOptions = {},
): Reporter {
  const pc = colorsFor(stderr);
  const out = colorsFor(stdout as { isTTY?: boolean });
  const lines = progress(stderr, { spinner: !options.quiet });
  const print = (text: string) => lines.print(fitWidth(text, stderr.isTTY ? stderr.columns : undefined));
  const variants = new Map<string, number>();
  const notPassed: ScenarioResult[] = [];
  let running = new RunningScenarios(0);
  const status = () => lines.status(running.text(pc, stderr.columns, stderr.rows));
  // the elapsed seconds move on between events; unref'd, it never keeps a finished run alive
  const ticker = setInterval(status, 1000).unref();
  const stop = () => {
    clearInterval(ticker);
    lines.stop();
  };
  options.signal?.addEventListener('abort', stop, { once: true });
  return {
    onEvent(event) {
      switch (event.kind) {
        case 'run-start':
          running = new RunningScenarios(event.scenarios.length);
          if (!options.quiet) print(pc.dim(`netrepro: ${event.scenarios.length} scenario(s) on ${event.provider}`));
          return status();
        case 'scenario-start':
          running.start(event.id);
          if (options.verbose) print(`${pc.bold('▶')} ${pc.bold(event.id)}  ${pc.dim(event.title)}`);
          return status();
        case 'lab-ready':
          variants.set(event.id, (variants.get(event.id) ?? 0) + 1);
          if (options.verbose) print(detailLine(pc, event, prefix(event, variants)));
          return;
        case 'phase-start':
          running.phase(event.id, event.variant, event.phase);
          if (options.verbose) print(detailLine(pc, event, prefix(event, variants)));
          return status();
        case 'step':
        case 'probe':
        case 'check':
          if (options.verbose) print(detailLine(pc, event, prefix(event, variants)));
          return;
        case 'scenario-end': {
          const r = event.result;
          running.end(r.id);
          if (r.verdict === 'failed' || r.verdict === 'errored') notPassed.push(r);
          if (options.verbose) print(outcomeBlock(pc, r, options.reproduce?.(r)));
          else if (!options.quiet) print(outcomeLine(pc, r));
          return status();
        }
        case 'run-end':
          stop();
          if (notPassed.length > 0) print(recap(pc, notPassed, options.reproduce));
          return;
      }
    },
    async onRunEnd(result) {
      const columns = (stdout as { isTTY?: boolean }).isTTY ? (stdout as NodeJS.WriteStream).columns : undefined;
      // awaited, with a turn of the event loop: a reader that went away (`run | head`) shows as EPIPE before
      // the run's exit code is decided, even when nothing was written while the scenarios ran
      await written(stdout, summary(result, out, columns));
      await written(stderr, '');
    },
  };
}

const written = (stream: NodeJS.WritableStream, text: string) =>
  new Promise<void>((resolve) => stream.write(text, () => setImmediate(resolve)));

/** Every scenario that failed or errored, with its whole story, once the run is over (as vitest closes). */
function recap(pc: Colors, results: ScenarioResult[], reproduce?: (r: ScenarioResult) => string): string {
  const rule = pc.red(`── ${results.length} did not pass ──`);
  return ['', rule, ...results.flatMap((r) => [outcomeBlock(pc, r, reproduce?.(r)), ''])].join('\n');
}
