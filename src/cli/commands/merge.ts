// `netrepro merge`: the JSON reports of a run's shards (`run --shard i/n` on several machines) joined into
// one run, written as any report `run` writes: the verdicts, counts and exit code of one run over them all.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunResult } from '../../engine/run/results.ts';
import { HarnessError } from '../../model/errors.ts';
import { loadScenarioFile, type LoadedScenario } from '../../model/load-scenario.ts';
import { jsonReporter } from '../../report/json-reporter.ts';
import { markdownReporter } from '../../report/markdown-reporter.ts';
import { reportContext } from '../../report/report-context.ts';
import { combineReporters, type Reporter } from '../../report/reporter.ts';
import { summary } from '../../report/summary-table.ts';
import { colorsFor } from '../../report/colors.ts';
import { verdictCounts } from '../../report/verdict-counts.ts';
import { EXIT } from '../exit-codes.ts';
import { checkReportPaths } from '../report-paths.ts';

interface MergeOptions {
  json?: string;
  junit?: string;
  markdown?: string;
  html?: string;
  /** The --profile the shards ran under, for the reports' reproduce commands. */
  profile?: string;
}

async function readRun(file: string): Promise<RunResult> {
  const text = await readFile(file, 'utf8').catch((e: NodeJS.ErrnoException) => {
    throw new HarnessError('USAGE', `${file}: cannot read it (${e.code})`, "name the shards' --json reports");
  });
  const run = JSON.parse(text) as RunResult;
  if (run?.version !== 1 || !Array.isArray(run.scenarios))
    throw new HarnessError(
      'USAGE',
      `${file}: not a run report (--json of netrepro run)`,
      "name the shards' --json reports",
    );
  return run;
}

/** The shards as one run: every scenario once, in the order of their files; the wall time of the slowest. */
export function mergeRuns(runs: readonly RunResult[], names: readonly string[]): RunResult {
  const providers = [...new Set(runs.map((r) => r.provider))];
  if (providers.length > 1)
    throw new HarnessError(
      'USAGE',
      `the reports come from different providers (${providers.join(', ')})`,
      'merge the shards of one run',
    );
  const seen = new Map<string, string>();
  for (const [i, r] of runs.entries())
    for (const s of r.scenarios) {
      if (seen.has(s.id))
        throw new HarnessError(
          'USAGE',
          `${s.id} is in both ${seen.get(s.id)} and ${names[i]}`,
          'merge the shards of one run, each once',
        );
      seen.set(s.id, names[i]!);
    }
  const scenarios = runs
    .flatMap((r) => r.scenarios)
    .sort((a, b) => a.file.localeCompare(b.file) || a.id.localeCompare(b.id));
  const merged: RunResult = {
    version: 1,
    provider: providers[0]!,
    durationMs: Math.max(...runs.map((r) => r.durationMs)),
    summary: { passed: 0, measured: 0, failed: 0, errored: 0, skipped: 0 },
    scenarios,
  };
  return { ...merged, summary: verdictCounts(merged) };
}

export default async function merge(files: string[], options: MergeOptions): Promise<number> {
  if (files.length === 0)
    throw new HarnessError('USAGE', "name the shards' JSON reports", 'netrepro merge a.json b.json --junit all.xml');
  const { stdoutTaken } = await checkReportPaths([
    { flag: '--json', what: 'JSON report', path: options.json },
    { flag: '--junit', what: 'JUnit report', path: options.junit },
    { flag: '--markdown', what: 'Markdown summary', path: options.markdown },
    { flag: '--html', what: 'HTML report', path: options.html },
  ]);
  const result = mergeRuns(await Promise.all(files.map(readRun)), files);
  // the scenario files, where they still are, give the reports their facts (CNI, profile, lines for JUnit)
  const loaded = (
    await Promise.allSettled(result.scenarios.filter((s) => s.file).map((s) => loadScenarioFile(s.file)))
  ).flatMap((r) => (r.status === 'fulfilled' ? [r.value] : [])) as LoadedScenario[];
  const context = reportContext(loaded, new Date(), options.profile);
  const reporters: Reporter[] = [];
  if (options.json) reporters.push(jsonReporter(options.json));
  if (options.junit)
    reporters.push((await import('../../report/junit-reporter.ts')).junitReporter(options.junit, context));
  if (options.markdown) reporters.push(markdownReporter(context, options.markdown, undefined));
  if (options.html) reporters.push((await import('../../report/html-reporter.ts')).htmlReporter(options.html, context));
  await combineReporters(reporters).onRunEnd(result);
  const out = stdoutTaken ? process.stderr : process.stdout;
  out.write(summary(result, colorsFor(out), undefined));
  out.write(`merged ${files.length} report(s): ${files.map((f) => join(f)).join(', ')}\n`);
  const counts = verdictCounts(result);
  return counts.failed + counts.errored > 0 ? EXIT.failed : EXIT.ok;
}
