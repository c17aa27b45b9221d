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

/** A command's `--help` ends with these: what it is for, then the line to type. */
const examples = (rows: readonly (readonly [what: string, command: string])[]) =>
  `\nExamples:\n${rows.map(([what, command]) => `  # ${what}\n  $ ${command}`).join('\n')}\n`;

const positiveInt = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('a whole number >= 1');
  return n;
};

export function buildCli(): Command {
  const program = new Command('netrepro')
    .description(
      'Reproduce Kubernetes networking incidents end to end: inject the fault, see the symptom, apply the fix, see it gone.',
    )
    .version(VERSION, '-V, --version', 'print the netrepro version')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) })
    .addHelpText(
      'after',
      `${envHelp()}\nExit codes: 0 every expectation held, 1 one failed, 2 invalid input, 3 environment unusable, 130/143 interrupted.\n`,
    );
  addListCommand(program);
  addRunCommand(program);
  addValidateCommand(program);
  addExplainCommand(program);
  addGateCommand(program);
  addMutateCommand(program);
  addMergeCommand(program);
  addRenderCommand(program);
  addCaptureCommand(program);
  addImportCommand(program);
  addCleanCommand(program);
  addSchemaCommand(program);
  return program;
}

/** The --provider option every command that runs labs takes. */
const provider = () => new Option('--provider <name>', 'where to run').choices(PROVIDER_NAMES).default('netns');

/** `netrepro list` */
function addListCommand(program: Command): void {
  program
    .command('list')
    .description('scenario ids and titles')
    .option('--json', 'as JSON: id, title, file, cni, incident')
    .addHelpText(
      'after',
      examples([
        ['ids and titles', 'netrepro list'],
        ['the ids of the flannel scenarios', 'netrepro list --json | jq -r \'.[] | select(.cni == "flannel") | .id\''],
      ]),
    )
    .action(lazy(() => import('./commands/list.ts')));
}

/** `netrepro run` */
function addRunCommand(program: Command): void {
  program
    .command('run')
    .description('run scenarios; progress on stderr, summary on stdout')
    .argument('[ids...]', "scenario ids, YAML files or id patterns ('conntrack-*')")
    .option('--all', 'every scenario in scenarios/')
    .option('--cni <shape>', 'only scenarios of this CNI: bridge, flannel or cilium (alone: every one of it)')
    .addOption(provider())
    .option(
      '--profile <name>',
      'apply this profile to every scenario (profiles/NAME.yaml or a YAML file), as the gate does',
    )
    .option('--json <file>', 'write the JSON report (- for stdout; the summary then goes to stderr)')
    .option('--junit <file>', 'write a JUnit XML report (- for stdout)')
    .option(
      '--markdown <file>',
      'write a Markdown summary (- for stdout; also appended to $GITHUB_STEP_SUMMARY when set)',
    )
    .option(
      '--report-dir <dir>',
      'write evidence (captures, iptables-save -c, conntrack, ip) per phase here, and report.html',
    )
    .option(
      '--html <file>',
      'write a self-contained HTML report: per probe the diagnosis and the packet path (- for stdout)',
    )
    .option(
      '--parallel <n>',
      'scenarios run at once; above 1, each also runs its fix variants side by side (a lab per variant); on a real cluster provider, at most N clusters at once, variants included',
      positiveInt,
      1,
    )
    .option('--fail-fast', 'start no other scenario once one failed or errored (those under way finish)')
    .option(
      '--shard <i/n>',
      "run part i of n of the selection, balanced by each scenario's recorded cost (netrepro merge joins the parts' --json reports)",
    )
    .option('-q, --quiet', 'no progress: only the recap of scenarios that did not pass, with why, and the summary')
    .option(
      '-v, --verbose',
      'every lab, phase, step, probe and check as it happens (default: a line per scenario, then the recap)',
    )
    .option('--keep', 'leave the lab up after the run; prints its run id; `netrepro clean --run ID` removes it')
    .option(
      '--stop-after <phase>',
      'run the phases up to this one (baseline, faulted or a fix name) and stop; with --keep the lab stays in that state for `netrepro capture --run`',
    )
    .addHelpText(
      'after',
      examples([
        ['one scenario, in about a second', 'netrepro run service-no-endpoints-reject'],
        ['the same, step by step', 'netrepro run service-no-endpoints-reject --verbose'],
        ['every conntrack scenario on flannel, two at a time', "netrepro run 'conntrack-*' --cni flannel --parallel 2"],
        [
          'CI: everything, reports for the pipeline, stop at the first failure',
          'netrepro run --all --quiet --fail-fast --junit junit.xml --json report.json',
        ],
        ['the JSON report into jq', 'netrepro run br-netfilter-clusterip-same-node --json - | jq .summary'],
        ['under a profile', 'netrepro run cilium-kube-proxy-forward-race --profile kube-proxy-1.15'],
        [
          'leave the lab in its faulted state for `netrepro capture --run RUNID` (it prints the run id)',
          'netrepro run br-netfilter-clusterip-same-node --keep --stop-after faulted',
        ],
      ]),
    )
    .action(lazy(() => import('./commands/run.ts')));
}

/** `netrepro validate` */
function addValidateCommand(program: Command): void {
  program
    .command('validate')
    .description(
      'check scenario files without running them; with --provider also whether it can run them (a file it cannot run: "FILE: skipped on PROVIDER: REASON", exit 0 as `run` would)',
    )
    .argument('<files...>')
    .addOption(
      new Option(
        '--provider <name>',
        "check each file against this provider's capabilities and topology fit (nothing is provisioned)",
      ).choices(PROVIDER_NAMES),
    )
    .option(
      '--profile <name>',
      'apply this profile first (profiles/NAME.yaml or a YAML file): its versions decide the fit of kind/minikube/k3s',
    )
    .addHelpText(
      'after',
      examples([
        ['every scenario file', 'netrepro validate scenarios/*.yaml'],
        [
          'could kind run it under a profile?',
          'netrepro validate scenarios/stale-sock-lb-program.yaml --provider kind --profile kube-proxy-1.29-be-liberal',
        ],
      ]),
    )
    .action(lazy(() => import('./commands/validate.ts')));
}

/** `netrepro explain` */
function addExplainCommand(program: Command): void {
  program
    .command('explain')
    .description('run one scenario and print the diagnosis with the evidence behind it')
    .argument('<id>')
    .addOption(provider())
    .option('--profile <name>', 'apply this profile first (profiles/NAME.yaml or a YAML file)')
    .option('--report-dir <dir>', 'keep the evidence here (default: a temporary directory, removed afterwards)')
    .option(
      '--html <file>',
      'also write the HTML report (diagnosis and packet path per probe; - for stdout, the explanation then goes to stderr)',
    )
    .addHelpText(
      'after',
      examples([
        ['why the br_netfilter SYN-ACK comes from the pod IP', 'netrepro explain br-netfilter-clusterip-same-node'],
        [
          'keep the captures and a page to share',
          'netrepro explain cilium-kube-proxy-forward-race --report-dir evidence/ --html race.html',
        ],
      ]),
    )
    .action(lazy(() => import('./commands/explain.ts')));
}

/** `netrepro merge` */
function addMergeCommand(program: Command): void {
  program
    .command('merge')
    .description("join the --json reports of a run's shards (run --shard i/n) into one run's reports")
    .argument('<reports...>', "the shards' JSON reports")
    .option('--json <file>', 'write the merged run report as JSON (- for stdout)')
    .option('--junit <file>', 'write the merged JUnit report')
    .option('--markdown <file>', 'write the merged Markdown summary')
    .option('--html <file>', 'write the merged HTML report')
    .option('--profile <profile>', "the --profile the shards ran under, for the reports' reproduce commands")
    .addHelpText(
      'after',
      examples([
        [
          'three machines, then one report',
          'netrepro run --all --shard 1/3 --json s1.json  # and 2/3, 3/3 elsewhere\nnetrepro merge s1.json s2.json s3.json --junit junit.xml --html report.html',
        ],
      ]),
    )
    .action(lazy(() => import('./commands/merge.ts')));
}

/** `netrepro gate` */
function addGateCommand(program: Command): void {
  program
    .command('gate')
    .description(
      "run every scenario's trigger under two profiles; exit 1 when the candidate is newly susceptible to an incident",
    )
    .argument('[ids...]', 'scenario ids or files (default: all)')
    .requiredOption('--baseline <profile>', 'profile name in profiles/ or a YAML file')
    .requiredOption('--candidate <profile>', 'profile name in profiles/ or a YAML file')
    .addOption(provider())
    .option('--json <file>', 'write the gate result as JSON (- for stdout; the matrix then goes to stderr)')
    .option('--junit <file>', 'write the gate as a JUnit report: a regression or an unjudged incident is a failure')
    .option('--html <file>', 'write the gate as one self-contained HTML page')
    .option('--markdown <file>', 'write the matrix as Markdown for a pull-request comment (- for stdout)')
    .option('--parallel <n>', 'labs at once', positiveInt, 1)
    .addHelpText(
      'after',
      examples([
        [
          'does kube-proxy 1.15 open an incident 1.14 was immune to?',
          'netrepro gate --baseline kube-proxy-1.14 --candidate kube-proxy-1.15 --parallel 2',
        ],
        [
          'two scenarios, Markdown for a pull request',
          'netrepro gate --baseline kube-proxy-1.15 --candidate kube-proxy-1.29-be-liberal conntrack-invalid-reset cilium-kube-proxy-forward-race --markdown gate.md',
        ],
      ]),
    )
    .action(lazy(() => import('./commands/gate.ts')));
}

/** `netrepro mutate` */
function addMutateCommand(program: Command): void {
  program
    .command('mutate')
    .description(
      'mutation testing: remove the fault, remove each fix, swap each faulted outcome; every mutant must make the scenario fail',
    )
    .argument('[ids...]', 'scenario ids or YAML files')
    .option('--all', 'every scenario in scenarios/')
    .addOption(provider())
    .option(
      '--json <file>',
      'write the mutants and the kill rate as JSON (- for stdout; the table then goes to stderr)',
    )
    .option('--parallel <n>', 'scenarios mutated at once', positiveInt, 1)
    .addHelpText(
      'after',
      examples([
        ['can this verdict fail?', 'netrepro mutate service-no-endpoints-reject'],
        ['every scenario, the kill rate as JSON', 'netrepro mutate --all --parallel 2 --json mutants.json'],
      ]),
    )
    .action(lazy(() => import('./commands/mutate.ts')));
}

/** `netrepro render` */
function addRenderCommand(program: Command): void {
  program
    .command('render')
    .description(
      'print what the netns lab installs on each node (iptables-save text, routes, neighbour/FDB entries) without running anything',
    )
    .argument('<id>', 'scenario id or YAML file')
    .option('--profile <name>', 'apply this profile first (profiles/NAME.yaml or a YAML file)')
    .option('--node <name>', 'only this node')
    .option(
      '--nfacct',
      'as on a node where kube-proxy could create its nfacct counters (the lab cannot: no nfacct tool)',
    )
    .addHelpText(
      'after',
      examples([
        ["node-a's rules and routes", 'netrepro render br-netfilter-clusterip-same-node --node node-a'],
        ['the same under kube-proxy 1.15', 'netrepro render conntrack-invalid-reset --profile kube-proxy-1.15'],
      ]),
    )
    .action(lazy(() => import('./commands/render.ts')));
}

/** `netrepro capture` */
function addCaptureCommand(program: Command): void {
  program
    .command('capture')
    .description(
      "read, read-only, what decides a packet's fate on a node (rules, routes, sysctls, modules, conntrack, BPF) into a bundle for `netrepro import` (docs/capture.md)",
    )
    .option('--out <dir|file.tar.gz>', 'where the bundle goes (default: ./netrepro-capture-NODE-TIMESTAMP/)')
    .option('--redact', 'rename namespaces, Services and pods consistently; the mapping is written beside the bundle')
    .option(
      '--conntrack [lines]',
      `also the conntrack table, its first lines (default ${10_000}); conntrack -S is always read`,
    )
    .option(
      '--kubeconfig <path>',
      'also read nodes, pods, Services and EndpointSlices through this kubeconfig (default: $KUBECONFIG)',
    )
    .option('--node-name <name>', "this host's Kubernetes node name (default: the hostname)")
    .option('--run <runId>', 'the nodes of a run kept with `netrepro run --keep` (a netns lab or a local cluster)')
    .option('--node <name...>', 'with --run: only these nodes')
    .option(
      '--kubectl-debug <node...>',
      "a real cluster's node, through `kubectl debug node/NODE` and the host's own tools",
    )
    .option('--image <image>', 'the debug pod image for --kubectl-debug (it needs only chroot)', 'busybox:1.36')
    .option(
      '--debug-profile <profile>',
      "kubectl debug's --profile (kubectl >= 1.27; sysadmin: a privileged pod, which iptables-save and conntrack need)",
    )
    .option('--kubectl <path>', 'the kubectl to run (default: kubectl on PATH)')
    .addHelpText(
      'after',
      examples([
        [
          'on the node that drops traffic, as root',
          'netrepro capture --kubeconfig /etc/kubernetes/admin.conf --out node.tar.gz',
        ],
        ['a lab left faulted by `netrepro run ID --keep --stop-after faulted`', 'netrepro capture --run 1a2b3c'],
        ['to share: names renamed, the mapping beside the bundle', 'netrepro capture --redact --out node.tar.gz'],
        [
          "a real cluster's node through a debug pod",
          'netrepro capture --kubectl-debug worker-1 --debug-profile sysadmin --out worker-1.tar.gz',
        ],
      ]),
    )
    .action(lazy(() => import('./commands/capture.ts')));
}

/** `netrepro import` */
function addImportCommand(program: Command): void {
  program
    .command('import')
    .description(
      'write a replay scenario from a capture bundle: the nodes hold the captured state verbatim, every probe is expected ok',
    )
    .argument('<bundle>', 'the bundle `netrepro capture` wrote: a directory or a .tar.gz')
    .option('-o, --output <file>', 'the scenario file to write (default: ID.yaml here)')
    .option('--id <id>', 'the scenario id (default: replay-BUNDLE)')
    .addHelpText(
      'after',
      examples([
        ['a bundle as a scenario', 'netrepro import capture-2026-11-28/ -o incident.yaml'],
        ['then replay it', 'netrepro run incident.yaml'],
      ]),
    )
    .action(lazy(() => import('./commands/import.ts')));
}

/** `netrepro clean` */
function addCleanCommand(program: Command): void {
  program
    .command('clean')
    .description(
      'remove every leftover of earlier runs by the run prefix: namespaces, processes, cgroups, state; kind/minikube/k3s clusters',
    )
    .option('--force', 'also remove labs of runs that are still alive (e.g. kept with --keep)')
    .option('--run <runId>', 'only this run (a netns lab or local cluster, alive or not)')
    .addHelpText(
      'after',
      examples([
        ['after a crash or kill -9', 'netrepro clean'],
        ['also a lab kept with run --keep', 'netrepro clean --force'],
        ['only the run kept as 1a2b3c', 'netrepro clean --run 1a2b3c'],
      ]),
    )
    .action(lazy(() => import('./commands/clean.ts')));
}

/** `netrepro schema` */
function addSchemaCommand(program: Command): void {
  program
    .command('schema')
    .description('print the JSON Schema of scenario files (for editors)')
    .addHelpText('after', examples([['for an editor', 'netrepro schema > scenario.schema.json']]))
    .action(lazy(() => import('./commands/schema.ts')));
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
