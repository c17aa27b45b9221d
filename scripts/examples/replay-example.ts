// What a lab example printed, rendered again from its recorded report by the reporters as they are
// now, without a lab. `run`: the console reporter is fed the events the engine emitted, rebuilt from
// the run report in the order run-scenario.ts emits them for a run of one lab at a time (a phase's
// foreground steps, its probes, its background steps, its checks); `gate`: the matrix gateText prints
// (a gate example shows stdout alone: its progress lines come in the order the labs finish).
// The script that records an example checks that this reproduces the run's output byte for byte.
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { stripVTControlCharacters } from 'node:util';
import { resolve, sep } from 'node:path';
import { packagePath } from '../../src/model/package-root.ts';
import type { RunEvent, RunResult } from '../../src/engine/run/results.ts';
import type { GateResult } from '../../src/engine/gate/run-gate.ts';
import { selectRunScenarios } from '../../src/cli/select-scenarios.ts';
import { loadAllScenarios, selectScenarios } from '../../src/model/find-scenarios.ts';
import { consoleReporter } from '../../src/report/console-reporter.ts';
import { defaultInvocation, reproduceCommand } from '../../src/report/reproduce-command.ts';
import { gateText } from '../../src/report/gate-report.ts';
import type { ExampleCommand } from './example-command.ts';

/** What `npm run docs:examples` keeps of a lab example (test/fixtures/readme-examples/). */
export interface ExampleRecord {
  /** The marker's command. */
  command: string;
  exitCode: number;
  /** The `--json` report of the run: a run report for `run`, a gate report for `gate`. */
  report: unknown;
}

export async function replayExample(command: ExampleCommand, record: ExampleRecord): Promise<string> {
  if (command.name === 'run') return replayRun(record.report as RunResult, command.stdoutOnly, command.options);
  if (command.name === 'gate') {
    if (!command.stdoutOnly) throw new Error('a gate example shows stdout alone: end it with 2>/dev/null');
    return gateText(record.report as GateResult);
  }
  throw new Error(`no replay for \`${command.name}\`: a lab example is \`run\` or \`gate\``);
}

/**
 * The scenario ids the record's run covered, and those its command selects now (a scenario added,
 * removed or renamed since): when they differ, the block shows a run of another set of scenarios.
 */
export async function scenarioSets(
  command: ExampleCommand,
  record: ExampleRecord,
): Promise<{ recorded: string[]; now: string[] }> {
  const recorded = (record.report as { scenarios: { id: string }[] }).scenarios.map((s) => s.id);
  const ids = command.operands;
  const selected =
    command.name === 'run'
      ? await selectRunScenarios(ids, command.options)
      : ids.length
        ? await selectScenarios(ids)
        : await loadAllScenarios();
  return { recorded, now: selected.map((s) => s.scenario.id) };
}

async function replayRun(result: RunResult, stdoutOnly: boolean, options: Record<string, unknown>): Promise<string> {
  let printed = '';
  // a stream that is no terminal: plain lines, as the recorded run printed into a file
  const sink = (shown: boolean) =>
    Object.assign(new EventEmitter(), {
      isTTY: false,
      write: (chunk: string, done?: () => void) => {
        if (shown) printed += chunk;
        done?.();
        return true;
      },
    }) as unknown as NodeJS.WriteStream;
  const reporter = consoleReporter(sink(!stdoutOnly), sink(true), {
    quiet: options.quiet === true,
    verbose: options.verbose === true,
    reproduce: (r) =>
      reproduceCommand(
        r.id,
        result.provider,
        // a scenario file outside the package's scenarios/ is named by its file, as the run named it
        { shipped: shipped(r.file), file: r.file, appliedProfile: options.profile as string | undefined },
        defaultInvocation(),
      ),
  });
  for (const event of runEvents(result)) reporter.onEvent?.(event);
  await reporter.onRunEnd?.(result);
  return stripVTControlCharacters(printed);
}

/** A file the recorded run read from the package's scenarios/ (the report holds it relative to the run's directory, the package root). */
const shipped = (file: string | undefined) =>
  file === undefined || resolve(packagePath(), file).startsWith(packagePath('scenarios') + sep);

function* runEvents(result: RunResult): Generator<RunEvent> {
  yield { kind: 'run-start', provider: result.provider, scenarios: result.scenarios.map((s) => s.id) };
  for (const s of result.scenarios) {
    const id = s.id;
    yield { kind: 'scenario-start', id, title: s.title };
    for (const lab of s.labs) {
      yield { kind: 'lab-ready', id, variant: lab.variant, ms: lab.provisionMs };
      for (const phase of s.phases.filter((p) => p.variant === lab.variant)) {
        yield { kind: 'phase-start', id, phase: phase.name, variant: phase.variant, title: phase.title };
        for (const step of phase.steps.filter((x) => !x.background))
          yield { kind: 'step', id, phase: phase.name, variant: phase.variant, step };
        for (const probe of phase.probes) yield { kind: 'probe', id, phase: phase.name, variant: phase.variant, probe };
        for (const step of phase.steps.filter((x) => x.background))
          yield { kind: 'step', id, phase: phase.name, variant: phase.variant, step };
        for (const check of phase.checks) yield { kind: 'check', id, phase: phase.name, variant: phase.variant, check };
      }
    }
    yield { kind: 'scenario-end', result: s };
  }
  yield { kind: 'run-end', result };
}

/** Where an example's record lives: a file named after its command (a long one cut, with a hash of all of it). */
export function recordFile(command: string): string {
  const slug = command
    .replace(/^(node bin\/netrepro\.js|netrepro) /, '')
    .replace(/[^a-z0-9]+/gi, '-')
    .replace(/^-|-$/g, '')
    .toLowerCase();
  const name =
    slug.length <= 80 ? slug : `${slug.slice(0, 60)}-${createHash('sha256').update(command).digest('hex').slice(0, 8)}`;
  return `test/fixtures/readme-examples/${name}.json`;
}
