// `netrepro run`: scenarios in labs, progress on stderr, summary on stdout, reports on request.
import { join } from 'node:path';
import { awaitedLater } from '../../contract/awaited-later.ts';
import { usableProvider } from '../../providers/create-provider.ts';
import { resolveRunConfig } from '../../providers/run-config.ts';
import type { RunResult } from '../../engine/run/results.ts';
import { runSuite } from '../../engine/run/run-suite.ts';
import { stopAfterPlan } from '../../engine/run/run-scenario.ts';
import { unusableRun } from '../../engine/run/unusable-run.ts';
import { EXIT } from '../exit-codes.ts';
import { interruptSummary } from '../interrupt-summary.ts';
import { interruptible } from '../interruptible.ts';
import { checkReportPaths } from '../report-paths.ts';
import { selectRunScenarios } from '../select-scenarios.ts';
import { parseShard, recordedCosts, shardOf } from '../shard.ts';
import { HarnessError } from '../../model/errors.ts';
import { applyProfile, loadProfile } from '../../model/profile.ts';
import { consoleReporter } from '../../report/console-reporter.ts';
import { jsonReporter } from '../../report/json-reporter.ts';
import { markdownReporter } from '../../report/markdown-reporter.ts';
import { reportContext } from '../../report/report-context.ts';
import { defaultInvocation, reproduceCommand, shellWord } from '../../report/reproduce-command.ts';
import { reproducingEnv } from '../env-knobs.ts';
import { combineReporters, type Reporter } from '../../report/reporter.ts';
import { verdictCounts } from '../../report/verdict-counts.ts';

export interface RunOptions {
  all?: boolean;
  provider: string;
  json?: string;
  junit?: string;
  markdown?: string;
  reportDir?: string;
  html?: string;
  keep?: boolean;
  parallel: number;
  /** profiles/NAME.yaml or a YAML file, applied to every scenario (and a real provider's versions). */
  profile?: string;
  /** Keep only scenarios of this CNI shape. */
  cni?: string;
  /** After a scenario fails or errors, start no other. */
  failFast?: boolean;
  quiet?: boolean;
  verbose?: boolean;
  /** `i/n`: part i of n of the selection (shard.ts). */
  shard?: string;
  /** baseline, faulted or a fix's name: the last phase each lab runs (with --keep, the state it is left in). */
  stopAfter?: string;
}

export default async function run(ids: string[], options: RunOptions): Promise<number> {
  const profile = options.profile ? await loadProfile(options.profile) : undefined;
  // the provider's checks (programs, kernel features: processes, mostly waiting) run while the scenarios parse
  // awaited below, after the scenarios: a bad scenario file is reported first
  const usable = awaitedLater(usableProvider(resolveRunConfig({ provider: options.provider, profile })));
  const chosen = await selectRunScenarios(ids, options);
  const selected = options.shard
    ? shardOf(chosen, parseShard(options.shard), await recordedCosts(options.provider))
    : chosen;
  const scenarios = profile ? selected.map((s) => ({ ...s, scenario: applyProfile(s.scenario, profile) })) : selected;
  // a phase a scenario does not have is bad input, said before any lab starts
  if (options.stopAfter !== undefined)
    for (const s of scenarios) stopAfterPlan(s.scenario, s.scenario.fixes, options.stopAfter);
  const { stdoutTaken } = await checkReportPaths([
    { flag: '--json', what: 'JSON report', path: options.json },
    { flag: '--junit', what: 'JUnit report', path: options.junit },
    { flag: '--markdown', what: 'Markdown summary', path: options.markdown },
    { flag: '--html', what: 'HTML report', path: options.html },
    { flag: '--report-dir', what: 'evidence', path: options.reportDir, directory: true },
    { flag: '$GITHUB_STEP_SUMMARY', what: 'step summary', path: process.env.GITHUB_STEP_SUMMARY || undefined },
  ]);
  const invocation = defaultInvocation(reproducingEnv(process.env, shellWord));
  const context = reportContext(scenarios, new Date(), options.profile, invocation);
  const files: Reporter[] = [];
  if (options.json) files.push(jsonReporter(options.json));
  // loaded only when asked for
  if (options.junit) files.push((await import('../../report/junit-reporter.ts')).junitReporter(options.junit, context));
  if (options.markdown || process.env.GITHUB_STEP_SUMMARY)
    files.push(markdownReporter(context, options.markdown, process.env.GITHUB_STEP_SUMMARY));
  // the page with each probe's diagnosis and packet path: --html FILE, and report.html in --report-dir
  for (const file of [options.html, options.reportDir && join(options.reportDir, 'report.html')])
    if (file) files.push((await import('../../report/html-reporter.ts')).htmlReporter(file, context));

  let provider;
  try {
    provider = await usable;
  } catch (e) {
    // exit 3 still leaves CI a report: every scenario errored with the reason
    if (e instanceof HarnessError && e.code === 'ENVIRONMENT')
      await combineReporters(files).onRunEnd(unusableRun(scenarios, options.provider, e));
    throw e;
  }
  const { signal, exitCode, interruptedBy, labsDown } = interruptible();
  const labs = interruptSummary(signal);
  // a report on stdout keeps it clean for a reader (`--json - | jq`): the summary goes to stderr
  const reporter = combineReporters([
    consoleReporter(process.stderr, stdoutTaken ? process.stderr : process.stdout, {
      quiet: options.quiet,
      verbose: options.verbose,
      signal,
      reproduce: (r) => reproduceCommand(r.id, provider.name, context.scenarios.get(r.id), invocation),
    }),
    labs,
    ...files,
  ]);
  const interrupted = () => {
    process.stderr.write(`${labs.line(interruptedBy()!, exitCode()!, scenarios.length)}\n`);
    return exitCode()!;
  };
  let result: RunResult;
  try {
    result = await runSuite(scenarios, {
      provider,
      reportDir: options.reportDir,
      parallel: options.parallel,
      signal,
      emit: reporter.onEvent,
      keep: options.keep,
      failFast: options.failFast,
      stopAfter: options.stopAfter,
    });
  } catch (e) {
    if (exitCode() !== undefined) return interrupted();
    throw e;
  } finally {
    labsDown();
  }
  try {
    await reporter.onRunEnd(result);
  } catch (e) {
    if (exitCode() !== undefined) return interrupted();
    throw e;
  }
  if (exitCode() !== undefined) return interrupted();
  if (options.keep) process.stderr.write(keptLabs(result, options.stopAfter));
  const notRun = scenarios.length - result.scenarios.length;
  if (options.failFast && notRun > 0)
    process.stderr.write(`--fail-fast: stopped after the first failure; ${notRun} scenario(s) not run\n`);
  const counts = verdictCounts(result);
  return counts.failed + counts.errored > 0 ? EXIT.failed : EXIT.ok;
}

/** Each kept lab: its run id, the phase it was left in, and the commands that capture and remove it. */
export function keptLabs(result: RunResult, stopAfter: string | undefined): string {
  return result.scenarios
    .flatMap((s) =>
      s.labs.flatMap((lab) => {
        const last = s.phases.filter((p) => p.variant === lab.variant).at(-1);
        const state = last ? `after its ${last.name} phase (${last.status})` : 'before any phase';
        return [
          `kept: ${s.id} [${lab.variant}] run ${lab.runId}, left ${state}${stopAfter ? `; --stop-after ${stopAfter}` : ''}`,
          `  capture: netrepro capture --run ${lab.runId}`,
          `  remove:  netrepro clean --run ${lab.runId}`,
        ];
      }),
    )
    .map((l) => `${l}\n`)
    .join('');
}
