// netrepro's command line: options and help only. Each command's code is imported when that command
// runs (src/cli/commands/<name>.ts, default export), so `--help` and `list` load no engine, no
// process runner, no lab. A new command is one file in src/cli/commands/ plus its registration here.
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { PROVIDER_NAMES } from '../contract/provider-names.ts';
import { colorsFor } from '../report/colors.ts';
import { envHelp } from './env-knobs.ts';
import { EXIT, exitCodeOf } from './exit-codes.ts';
import { HarnessError } from '../model/errors.ts';
import { VERSION } from '../model/version.ts';


/** A command's code, loaded when it runs; a returned number is the exit code. */
type CommandModule = { default: (...args: never[]) => unknown };
const lazy =
  (load: () => Promise<CommandModule>) =>
  async (...args: unknown[]): Promise<void> => {
    const code = await (await load()).default(...(args as never[]));
    if (typeof code === 'number') process.exitCode = code;
  };

const positiveInt = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('a whole number >= 1');
  return n;
};

export function buildCli(): Command {
  const program = new Command('netrepro')
    .description('Reproduce Kubernetes networking incidents end to end: inject the fault, see the symptom, apply the fix, see it gone.')
    .version(VERSION, '-V, --version', 'print the netrepro version')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) })
    .addHelpText('after', `${envHelp()}\nExit codes: 0 every expectation held, 1 one failed, 2 invalid input, 3 environment unusable, 130/143 interrupted.\n`);
  const provider = () => new Option('--provider <name>', 'where to run').choices(PROVIDER_NAMES).default('netns');

  program
    .command('list')
    .description('scenario ids and titles')
    .option('--json', 'as JSON: id, title, file, cni, incident')
    .action(lazy(() => import('./commands/list.ts')));

  program
    .command('run')
    .description('run scenarios; progress on stderr, summary on stdout')
    .argument('[ids...]', 'scenario ids or YAML files')
    .option('--all', 'every scenario in scenarios/')
    .addOption(provider())
    .option('--json <file>', 'write the JSON report')
    .option('--junit <file>', 'write a JUnit XML report')
    .option('--markdown <file>', 'write a Markdown summary (also appended to $GITHUB_STEP_SUMMARY when set)')
    .option('--report-dir <dir>', 'write evidence (captures, iptables-save -c, conntrack, ip) per phase here, and report.html')
    .option('--html <file>', 'write a self-contained HTML report: per probe the diagnosis and the packet path')
    .option('--parallel <n>', 'scenarios run at once; above 1, each also runs its fix variants side by side (a lab per variant)', positiveInt, 1)
    .option('--keep', 'leave the lab up after the run; `netrepro clean --force` removes it')
    .action(lazy(() => import('./commands/run.ts')));

  program
    .command('validate')
    .description('check scenario files without running them; with --provider also whether it can run them (a file it cannot run: "FILE: skipped on PROVIDER: REASON", exit 0 as `run` would)')
    .argument('<files...>')
    .addOption(new Option('--provider <name>', "check each file against this provider's capabilities and topology fit (nothing is provisioned)").choices(PROVIDER_NAMES))
    .option('--profile <name>', 'apply this profile first (profiles/NAME.yaml or a YAML file): its versions decide the fit of kind/minikube/k3s')
    .action(lazy(() => import('./commands/validate.ts')));

  program
    .command('explain')
    .description('run one scenario and print the diagnosis with the evidence behind it')
    .argument('<id>')
    .addOption(provider())
    .option('--report-dir <dir>', 'keep the evidence here (default: a temporary directory)')
    .option('--html <file>', 'also write the HTML report (diagnosis and packet path per probe)')
    .action(lazy(() => import('./commands/explain.ts')));

  program
    .command('gate')
    .description("run every scenario's trigger under two profiles; exit 1 when the candidate is newly susceptible to an incident")
    .argument('[ids...]', 'scenario ids or files (default: all)')
    .requiredOption('--baseline <profile>', 'profile name in profiles/ or a YAML file')
    .requiredOption('--candidate <profile>', 'profile name in profiles/ or a YAML file')
    .addOption(provider())
    .option('--json <file>', 'write the gate result as JSON')
    .option('--markdown <file>', 'write the matrix as Markdown (for a pull-request comment)')
    .option('--parallel <n>', 'labs at once', positiveInt, 1)
    .action(lazy(() => import('./commands/gate.ts')));

  program
    .command('mutate')
    .description('mutation testing: remove the fault, remove each fix, swap each faulted outcome; every mutant must make the scenario fail')
    .argument('[ids...]', 'scenario ids or YAML files')
    .option('--all', 'every scenario in scenarios/')
    .addOption(provider())
    .option('--json <file>', 'write the mutants and the kill rate as JSON')
    .option('--parallel <n>', 'scenarios mutated at once', positiveInt, 1)
    .action(lazy(() => import('./commands/mutate.ts')));

  program
    .command('render')
    .description('print what the netns lab installs on each node (iptables-save text, routes, neighbour/FDB entries) without running anything')
    .argument('<id>', 'scenario id or YAML file')
    .option('--profile <name>', 'apply this profile first (profiles/NAME.yaml or a YAML file)')
    .option('--node <name>', 'only this node')
    .option('--nfacct', 'as on a node where kube-proxy could create its nfacct counters (the lab cannot: no nfacct tool)')
    .action(lazy(() => import('./commands/render.ts')));

  program
    .command('clean')
    .description('remove every leftover of earlier runs by the run prefix: namespaces, processes, cgroups, state; kind/minikube/k3s clusters')
    .option('--force', 'also remove labs of runs that are still alive (e.g. kept with --keep)')
    .action(lazy(() => import('./commands/clean.ts')));

  program
    .command('schema')
    .description('print the JSON Schema of scenario files (for editors)')
    .action(lazy(() => import('./commands/schema.ts')));

  return program;
}

export async function main(argv: string[]): Promise<number> {
  try {
    process.exitCode = 0;
    await buildCli().parseAsync(argv);
    return Number(process.exitCode ?? 0);
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : EXIT.invalid;
    const c = colorsFor(process.stderr);
    if (e instanceof HarnessError) {
      process.stderr.write(`${c.red(`netrepro: ${e.message}`)}${e.hint ? `\n${c.dim(`hint: ${e.hint}`)}` : ''}\n`);
      return exitCodeOf(e);
    }
    process.stderr.write(`${c.red('netrepro: internal error')}\n${(e as Error).stack ?? e}\n`);
    return EXIT.failed;
  }
}
