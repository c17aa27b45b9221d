// Hosts outside the cluster where the nodes are docker containers (kind, minikube's docker driver, k3s): containers
// on the cluster's docker network, beside the node containers, with no route to the pod network (their
// default route is the network's gateway). A host is made like a pod: an idle probe-image container owns its
// network namespace (commands on `host/NAME` run in it: curl, nslookup, tcpdump), an idle agent container
// beside it runs the agent's commands, and each program it serves is one more agent container there running
// the pod agent (mounted from this package), so it answers like a pod's server does. All are named with the
// run prefix and labelled with the run, so teardown and `netrepro clean` remove them as they remove the nodes.
import type { TopologySpec } from '../../../model/scenario-schema.ts';
import { HarnessError } from '../../../model/errors.ts';
import { runCommand } from '../../../contract/command.ts';
import type { RunContext, Target } from '../../../contract/provider.ts';
import { agentProgramArgv } from '../../../contract/agent-program.ts';
import { CliNodeTarget, dockerNode } from './cli-node-target.ts';
import { AGENT_SOURCE } from '../common/deploy-workload.ts';
import type { RealCluster } from '../common/real-cluster.ts';
import { AGENT_COMMAND } from '../common/workload-objects.ts';
import { HOST_DOCKER } from './docker-engine.ts';

const READY_TIMEOUT_MS = 60_000;

export interface DockerHostsInput {
  topology: TopologySpec;
  /** The docker network the cluster's node containers are on. */
  network: string;
  run: RunContext;
  cluster: RealCluster;
  agentImage: string;
  probeImage: string;
  /** The agent as a program of the agent image (a pod image with the native agent); default: pod-agent.mjs, mounted. */
  agentCommand?: readonly string[];
  /** The engine the cluster's node containers run on. */
  docker?: readonly string[];
}

export interface DockerHost {
  name: string;
  target: Target;
  ip: string;
}

export const hostContainer = (run: RunContext, host: string) => `${run.prefix}host-${host}`;

/** Starts every host of the topology; each container's removal is registered before it is created. */
export async function startDockerHosts({
  topology,
  network,
  run,
  cluster,
  agentImage,
  probeImage,
  agentCommand,
  docker = HOST_DOCKER.docker,
}: DockerHostsInput): Promise<DockerHost[]> {
  const hosts: DockerHost[] = [];
  const agent = agentCommand ?? AGENT_COMMAND;
  const agentMount = agentCommand ? [] : ['-v', `${AGENT_SOURCE}:${AGENT_COMMAND[1]}:ro`];
  for (const host of topology.hosts) {
    const name = hostContainer(run, host.name);
    const common = ['--label', `netrepro.io/run=${run.runId}`];
    const programs = host.serve ?? [];
    cluster.onDestroy(`host containers of ${host.name}`, () =>
      removeContainers(docker, run, host.name, programs.length),
    );
    await runCommand(
      [
        ...docker,
        'run',
        '-d',
        '--name',
        name,
        ...common,
        '--network',
        network,
        ...entry(['sleep', 'infinity'], probeImage),
      ],
      { timeoutMs: 300_000, signal: run.signal },
    );
    const besideIt = (container: string, argv: readonly string[]) =>
      runCommand(
        [
          ...docker,
          'run',
          '-d',
          '--name',
          container,
          ...common,
          '--network',
          `container:${name}`,
          ...agentMount,
          ...entry(argv, agentImage),
        ],
        { timeoutMs: 300_000, signal: run.signal },
      );
    await besideIt(`${name}-agent`, ['sleep', 'infinity']);
    for (const [i, program] of programs.entries()) {
      await besideIt(`${name}-serve-${i}`, agentProgramArgv(agent, program, host.name, []));
      await waitReadyLine(docker, `${name}-serve-${i}`, run.signal);
    }
    const inspect = await runCommand(
      [...docker, 'inspect', '-f', `{{(index .NetworkSettings.Networks "${network}").IPAddress}}`, name],
      { timeoutMs: 30_000, signal: run.signal },
    );
    const ip = inspect.stdout.trim();
    if (!/^\d+\.\d+\.\d+\.\d+$/.test(ip))
      throw new HarnessError('LAB_FAILED', `host ${host.name}: no address on docker network ${network} (${ip})`);
    const inHost = dockerNode(name, probeImage, run.runId, undefined, docker);
    const wrap = (argv: readonly string[]) =>
      agent.every((word, i) => argv[i] === word) ? [...docker, 'exec', '-i', `${name}-agent`, ...argv] : inHost(argv);
    hosts.push({ name: host.name, ip, target: new CliNodeTarget(`host/${host.name}`, wrap) });
  }
  return hosts;
}

function removeContainers(docker: readonly string[], run: RunContext, host: string, programs: number) {
  const name = hostContainer(run, host);
  const beside = [...Array.from({ length: programs }, (_, i) => `${name}-serve-${i}`), `${name}-agent`];
  // `rm -f` of containers never created (a half-made host) fails for those alone
  return runCommand([...docker, 'rm', '-f', ...beside, name], { timeoutMs: 60_000, reject: false });
}

/** The agent prints `ready <program> <port>` once it listens. */
async function waitReadyLine(docker: readonly string[], container: string, signal: AbortSignal): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let logs = '';
  for (;;) {
    const got = await runCommand([...docker, 'logs', container], { timeoutMs: 30_000, reject: false, signal });
    logs = got.stdout + got.stderr;
    if (/^ready /m.test(got.stdout)) return;
    if (Date.now() > deadline)
      throw new HarnessError(
        'LAB_FAILED',
        `${container} never printed its ready line; its log:\n${logs.trim().split('\n').slice(-10).join('\n')}`,
      );
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** `--entrypoint PROGRAM IMAGE ARGS`: the program runs whatever entrypoint the image has (the project's pod image sleeps). */
const entry = (argv: readonly string[], image: string) => ['--entrypoint', argv[0]!, image, ...argv.slice(1)];
