// netrepro's command line. Exit codes: 0 every expectation held; 1 an expectation failed or a run
// errored; 2 invalid input; 3 environment unusable; 130/143 interrupted (after teardown).
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { z } from 'zod';
import pc from 'picocolors';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROVIDER_NAMES, usableProvider } from '../clusters/create-provider.ts';
import { cleanLeftovers } from '../clusters/netns/clean-leftovers.ts';
import { runSuite } from './engine/run-suite.ts';
import { runGate } from './gate/run-gate.ts';
import { loadProfile } from './model/profile.ts';
import { gateMarkdown, gateText } from './report/gate-report.ts';
import { explain } from './report/explain.ts';
import { HarnessError, ScenarioValidationError } from './model/errors.ts';
import { loadAllScenarios, selectScenarios } from './model/find-scenarios.ts';
import { loadScenarioFile } from './model/load-scenario.ts';
import { ScenarioSchema } from './model/scenario-schema.ts';
import { consoleReporter } from './report/console-reporter.ts';
import { gateReport } from './report/gate-json.ts';
import { jsonReporter } from './report/json-reporter.ts';
import { combineReporters, type Reporter } from './report/reporter.ts';
import type { RunResult } from './engine/results.ts';

const EXIT = { ok: 0, failed: 1, invalid: 2, environment: 3 } as const;

/**
 * Ctrl-C / SIGTERM abort the run; teardown still runs, then we exit 130 / 143. The handlers stay
 * installed for the whole run: with `once`, Node restores the default action and the process can
 * die mid-teardown. A third signal exits at once (then `netrepro clean` removes what is left).
 */
function interruptible(): { signal: AbortSignal; exitCode: () => number | undefined } {
  const controller = new AbortController();
  let code: number | undefined;
  let count = 0;
  const on = (sig: NodeJS.Signals, exit: number) =>
    process.on(sig, () => {
      count += 1;
      code ??= exit;
      if (count === 1) process.stderr.write(pc.yellow(`\n${sig}: tearing down the lab, then exiting ${exit}\n`));
      else if (count === 2) process.stderr.write(pc.yellow(`${sig}: still tearing down; once more to exit now and leave leftovers for \`netrepro clean\`\n`));
      else process.exit(exit);
      controller.abort();
    });
  on('SIGINT', 130);
  on('SIGTERM', 143);
  return { signal: controller.signal, exitCode: () => code };
}

interface RunOptions {
  all?: boolean;
  provider: (typeof PROVIDER_NAMES)[number];
  json?: string;
  junit?: string;
  reportDir?: string;
  keep?: boolean;
  parallel: number;
}

async function run(ids: string[], options: RunOptions): Promise<number> {
  if (ids.length === 0 && !options.all) throw new HarnessError('USAGE', 'name scenario ids or files, or pass --all', 'netrepro list shows the ids');
  const scenarios = options.all ? await loadAllScenarios() : await selectScenarios(ids);
  const provider = await usableProvider(options.provider);
  const reporters: Reporter[] = [consoleReporter()];
  if (options.json) reporters.push(jsonReporter(options.json));
  // loaded only when asked for: the JUnit builder costs ~140 ms of start-up
  if (options.junit) reporters.push((await import('./report/junit-reporter.ts')).junitReporter(options.junit));
  const reporter = combineReporters(reporters);
  const { signal, exitCode } = interruptible();
  let result: RunResult;
  try {
    result = await runSuite(scenarios, { provider, reportDir: options.reportDir, parallel: options.parallel, signal, emit: reporter.onEvent, keep: options.keep });
  } catch (e) {
    if (exitCode() !== undefined) return exitCode()!;
    throw e;
  }
  await reporter.onRunEnd(result);
  if (exitCode() !== undefined) return exitCode()!;
  return result.summary.failed + result.summary.errored > 0 ? EXIT.failed : EXIT.ok;
}

const positiveInt = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('a whole number >= 1');
  return n;
};

export function buildCli(): Command {
  const program = new Command('netrepro')
    .description('Reproduce Kubernetes networking incidents end to end: inject the fault, see the symptom, apply the fix, see it gone.')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });

  program
    .command('list')
    .description('scenario ids and titles')
    .action(async () => {
      for (const { scenario } of await loadAllScenarios()) process.stdout.write(`${scenario.id.padEnd(40)} ${scenario.title}\n`);
    });

  program
    .command('run')
    .description('run scenarios; progress on stderr, summary on stdout')
    .argument('[ids...]', 'scenario ids or YAML files')
    .option('--all', 'every scenario in scenarios/')
    .addOption(new Option('--provider <name>', 'where to run').choices(PROVIDER_NAMES).default('netns'))
    .option('--json <file>', 'write the JSON report')
    .option('--junit <file>', 'write a JUnit XML report')
    .option('--report-dir <dir>', 'write evidence (captures, iptables-save -c, conntrack, ip) per phase here')
    .option('--parallel <n>', 'scenarios run at once, each in its own lab', positiveInt, 1)
    .option('--keep', 'leave the lab up after the run; `netrepro clean --force` removes it')
    .action(async (ids: string[], options: RunOptions) => {
      process.exitCode = await run(ids, options);
    });

  program
    .command('validate')
    .description('check scenario files without running them')
    .argument('<files...>')
    .action(async (files: string[]) => {
      const problems: string[] = [];
      for (const file of files) {
        try {
          await loadScenarioFile(file);
          process.stdout.write(`${file}: ok\n`);
        } catch (e) {
          if (!(e instanceof ScenarioValidationError)) throw e;
          problems.push(e.message);
        }
      }
      if (problems.length > 0) throw new HarnessError('SCENARIO_INVALID', problems.join('\n'), 'fix the fields named above');
    });

  program
    .command('explain')
    .description('run one scenario and print the diagnosis with the evidence behind it')
    .argument('<id>')
    .addOption(new Option('--provider <name>').choices(PROVIDER_NAMES).default('netns'))
    .option('--report-dir <dir>', 'keep the evidence here (default: a temporary directory)')
    .action(async (id: string, options: { provider: RunOptions['provider']; reportDir?: string }) => {
      const reportDir = options.reportDir ?? (await mkdtemp(join(tmpdir(), 'netrepro-explain-')));
      const json = join(reportDir, 'report.json');
      process.exitCode = await run([id], { provider: options.provider, reportDir, json, parallel: 1 });
      process.stdout.write(await explain(json));
    });

  program
    .command('gate')
    .description('run every scenario\'s trigger under two profiles; exit 1 when the candidate is newly susceptible to an incident')
    .argument('[ids...]', 'scenario ids or files (default: all)')
    .requiredOption('--baseline <profile>', 'profile name in profiles/ or a YAML file')
    .requiredOption('--candidate <profile>', 'profile name in profiles/ or a YAML file')
    .addOption(new Option('--provider <name>', 'where to run').choices(PROVIDER_NAMES).default('netns'))
    .option('--json <file>', 'write the gate result as JSON')
    .option('--markdown <file>', 'write the matrix as Markdown (for a pull-request comment)')
    .option('--parallel <n>', 'labs at once', positiveInt, 1)
    .action(async (ids: string[], options: { baseline: string; candidate: string; provider: RunOptions['provider']; json?: string; markdown?: string; parallel: number }) => {
      const [baseline, candidate] = await Promise.all([loadProfile(options.baseline), loadProfile(options.candidate)]);
      const scenarios = ids.length ? await selectScenarios(ids) : await loadAllScenarios();
      const provider = await usableProvider(options.provider);
      const { signal, exitCode } = interruptible();
      const onAssessed = (profile: string, id: string, a: { verdict: string; reason: string }) =>
        process.stderr.write(`${pc.bold(profile)} ${id}: ${a.verdict === 'susceptible' ? pc.red(a.verdict) : pc.green(a.verdict)} ${pc.dim(`(${a.reason})`)}\n`);
      const result = await runGate(scenarios, baseline, candidate, { provider, signal, onAssessed, parallel: options.parallel });
      if (exitCode() !== undefined) {
        process.exitCode = exitCode();
        return;
      }
      process.stdout.write(gateText(result));
      if (options.json) await writeFile(options.json, JSON.stringify(gateReport(result), null, 2) + '\n');
      if (options.markdown) await writeFile(options.markdown, gateMarkdown(result));
      // a scenario that could not be judged under one profile fails the gate too: it could hide a regression
      process.exitCode = result.scenarios.some((s) => s.change === 'regression' || s.change === 'unjudged') ? EXIT.failed : EXIT.ok;
    });

  program
    .command('mutate')
    .description('mutation testing: remove the fault, remove each fix, swap each faulted outcome; every mutant must make the scenario fail')
    .argument('[ids...]', 'scenario ids or YAML files')
    .option('--all', 'every scenario in scenarios/')
    .addOption(new Option('--provider <name>', 'where to run').choices(PROVIDER_NAMES).default('netns'))
    .option('--json <file>', 'write the mutants and the kill rate as JSON')
    .option('--parallel <n>', 'scenarios mutated at once', positiveInt, 1)
    .action(async (ids: string[], options: { all?: boolean; provider: RunOptions['provider']; json?: string; parallel: number }) => {
      if (ids.length === 0 && !options.all) throw new HarnessError('USAGE', 'name scenario ids or files, or pass --all', 'netrepro list shows the ids');
      const { mutateAll, mutantLine, mutateTable, writeMutateJson } = await import('./mutate/mutate-command.ts');
      const scenarios = options.all ? await loadAllScenarios() : await selectScenarios(ids);
      const provider = await usableProvider(options.provider);
      const { signal, exitCode } = interruptible();
      const result = await mutateAll(scenarios, { provider, signal, parallel: options.parallel, onMutant: (m) => process.stderr.write(`${mutantLine(m)}\n`) });
      if (exitCode() !== undefined) {
        process.exitCode = exitCode();
        return;
      }
      process.stdout.write(mutateTable(result));
      if (options.json) await writeMutateJson(options.json, result);
      process.exitCode = result.killRate === 1 ? EXIT.ok : EXIT.failed;
    });

  program
    .command('clean')
    .description('remove every leftover of earlier runs by the run prefix: namespaces, processes, cgroups, state; kind/minikube/k3s clusters')
    .option('--force', 'also remove labs of runs that are still alive (e.g. kept with --keep)')
    .action(async (options: { force?: boolean }) => {
      const force = options.force ?? false;
      const { cleanRealLeftovers } = await import('../clusters/real/clean-real-leftovers.ts');
      const removed = [...(await cleanLeftovers({ force })), ...(await cleanRealLeftovers({ force }))];
      process.stdout.write(removed.length ? removed.map((r) => `removed ${r}\n`).join('') : 'nothing to clean\n');
    });

  program
    .command('schema')
    .description('print the JSON Schema of scenario files (for editors)')
    .action(() => {
      process.stdout.write(JSON.stringify(z.toJSONSchema(ScenarioSchema, { io: 'input', target: 'draft-2020-12' }), null, 2) + '\n');
    });

  return program;
}

export async function main(argv: string[]): Promise<number> {
  try {
    process.exitCode = 0;
    await buildCli().parseAsync(argv);
    return Number(process.exitCode ?? 0);
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : EXIT.invalid;
    if (e instanceof HarnessError) {
      process.stderr.write(`${pc.red(`netrepro: ${e.message}`)}${e.hint ? `\n${pc.dim(`hint: ${e.hint}`)}` : ''}\n`);
      return e.code === 'SCENARIO_INVALID' || e.code === 'USAGE' ? EXIT.invalid : e.code === 'ENVIRONMENT' ? EXIT.environment : EXIT.failed;
    }
    process.stderr.write(`${pc.red('netrepro: internal error')}\n${(e as Error).stack ?? e}\n`);
    return EXIT.failed;
  }
}

