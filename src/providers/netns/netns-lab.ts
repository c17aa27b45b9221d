// A provisioned lab: what it created, how to reach it, and how to take it all down again.
import { readdir, readFile, rm, rmdir } from 'node:fs/promises';
import { packagePath } from '../../model/package-root.ts';
import { HarnessError } from '../../model/errors.ts';
import type { TopologySpec } from '../../model/scenario-schema.ts';
import type { CommandRunner, Spawned } from '../../contract/command.ts';
import type { LabAction, StartedCluster, Target } from '../../contract/provider.ts';
import { TeardownStack } from '../../contract/teardown-stack.ts';
import { STATE_ROOT, type LabNames } from '../namespaces/lab-names.ts';
import { removeNamespaces } from '../namespaces/namespace-batch.ts';
import { killAll } from '../namespaces/namespace-pids.ts';
import type { LabCommands } from './native-commands.ts';
import { NetnsTarget } from './netns-target.ts';
import type { CniResult } from './cni-plugin.ts';
import type { ProbeTraceSession, TraceFlows } from '../../model/trace-events.ts';

/** What a lab action does on this lab; given by the provisioning code that knows the CNI shape. */
export type ActionHandler = (lab: NetnsLab, action: LabAction) => Promise<void>;
/** Traces one probe's packets in this lab. */
export type TraceHandler = (lab: NetnsLab, flows: TraceFlows, signal?: AbortSignal) => Promise<ProbeTraceSession>;

/** What a lab is made with: its names and topology, and how it performs actions and traces probes. */
export interface NetnsLabParts {
  /** Every name the lab creates, carrying the run prefix. */
  names: LabNames;
  /** Services change with `endpoint` and `service` steps: the lab keeps its own copy. */
  topology: TopologySpec;
  /** What a lab action (start a component, a Service change, a stale program) does here. */
  perform: ActionHandler;
  /** How a probe's packets are traced here. */
  trace: TraceHandler;
  /** The lab's command runner (its own spawner), ended as the last step of its teardown. */
  commands: LabCommands;
}

/** A pod's sandbox as its node's CNI chain made it: each plugin's config as called, and the result after each that ran. */
export interface PodNetwork {
  configs: Record<string, unknown>[];
  results: CniResult[];
}

export class NetnsLab implements StartedCluster {
  /** In creation order; destroyed in reverse. */
  readonly namespaces: string[] = [];
  readonly processes: Spawned[] = [];
  readonly addresses = new Map<string, string>();
  /** Host-side interface of each pod (veth on cni0, or lxc*), for shaping and captures. */
  readonly hostInterfaces = new Map<string, string>();
  /** Node -> /proc/PID/ns/mnt of its bpffs holder (cilium shape). */
  readonly mountNamespaces = new Map<string, string>();
  /** Pod -> its lxc veth and addresses (cilium shape), for the BPF masquerade map. */
  readonly ciliumEndpoints = new Map<string, { ip: string; lxc: string; lxcMac: string; podMac: string }>();
  /** Node -> cgroup v2 directory its pods run in (socket LB). */
  readonly cgroups = new Map<string, string>();
  /** Node -> its port on the fabric bridge (n0, n1, ...), for captures of the node network. */
  readonly fabricPorts = new Map<string, string>();
  /** Helper programs built for this lab (`{bin/inject-ahead}`), or why one could not be built. */
  readonly bins = new Map<string, { path?: string; error?: string }>();
  /** pod-agent.mjs, as real clusters run it: the lab's fallback, and what test/lab/native-agent.test.ts compares the native agent with. */
  readonly nodeAgentCommand = ['node', packagePath('src/providers/netns/agent/pod-agent.mjs')];
  /** Its native twin agent/pod-agent.c once built (provisioning, before the pods' programs start), else pod-agent.mjs. */
  agentCommand: readonly string[] = this.nodeAgentCommand;
  /** Pod -> its sandbox as the node's CNI chain made it (bridge and flannel shapes): what a DEL goes through. */
  readonly podNetworks = new Map<string, PodNetwork>();
  /** Node -> the kube-proxy release a `start` step put there (else the topology's). */
  readonly kubeProxyVersions = new Map<string, string>();
  readonly names: LabNames;
  /** Runs the lab's commands: its targets' and those it runs in the root namespace (`ip -n`, CNI plugins). */
  readonly commands: CommandRunner;
  /** Services change with `endpoint` and `service` steps: the lab keeps its own copy. */
  topology: TopologySpec;
  private readonly actionHandler: ActionHandler;
  private readonly traceHandler: TraceHandler;
  /** What the lab created, undone newest first: its processes, its namespaces, its cgroups, its state. */
  private readonly teardown: TeardownStack;
  private labEntries = false;

  constructor({ names, topology, perform, trace, commands }: NetnsLabParts) {
    this.names = names;
    this.topology = topology;
    this.actionHandler = perform;
    this.traceHandler = trace;
    this.commands = commands.runner;
    for (const s of topology.services) this.addresses.set(`svc/${s.name}`, s.clusterIP);
    this.teardown = new TeardownStack();
    // every other undo may run commands through it
    this.teardown.push('command spawner', () => commands.close());
    this.teardown.push(`state ${names.stateDir}`, async () => {
      await rm(names.stateDir, { recursive: true, force: true });
      await rmdir(STATE_ROOT).catch(() => {}); // only when no other run is using it
    });
    // a cgroup with no processes left can go; its attached programs are released with it
    this.teardown.push(`cgroups of run ${names.runId}`, () => removeRunCgroups(names.runId));
  }

  /** A process of this lab (pod agent, bpffs holder, trace monitor): killed at teardown before the namespaces go. */
  track(process: Spawned): void {
    this.registerLabTeardown();
    this.processes.push(process);
  }

  /** Undone at teardown before the lab's processes and namespaces go (the probe trace's filter entries). */
  atTeardown(what: string, undo: () => Promise<unknown>): void {
    this.teardown.push(what, undo);
  }

  /**
   * The namespaces and the processes are one entry each, over the lists as they are at teardown (removed
   * in one batch, killed at once), registered with the first namespace: processes go first, and killing
   * a bpffs holder ends its mount namespace, so the pins go with it.
   */
  private registerLabTeardown(): void {
    if (this.labEntries) return;
    this.labEntries = true;
    this.teardown.push('namespaces', () => removeNamespaces(this.namespaces, this.commands));
    this.teardown.push('processes', () => Promise.allSettled(this.processes.map((p) => p.stop('SIGKILL'))));
  }

  get nodeNames(): readonly string[] {
    return this.topology.nodes.map((n) => n.name);
  }

  node(name: string): NetnsTarget {
    if (!this.topology.nodes.some((n) => n.name === name))
      throw new HarnessError('LAB_FAILED', `no node ${name} in this lab`);
    return new NetnsTarget(`node/${name}`, this.names.netnsPath(this.names.node(name)), {
      commands: this.commands,
      mountNs: this.mountNamespaces.get(name),
    });
  }

  pod(name: string): NetnsTarget {
    const pod = this.topology.pods.find((p) => p.name === name);
    if (!pod) throw new HarnessError('LAB_FAILED', `no pod ${name} in this lab`);
    return new NetnsTarget(`pod/${name}`, this.names.netnsPath(this.names.pod(name)), {
      commands: this.commands,
      cgroup: this.cgroups.get(pod.node),
    });
  }

  host(name: string): NetnsTarget {
    if (!this.topology.hosts.some((h) => h.name === name))
      throw new HarnessError('LAB_FAILED', `no host ${name} in this lab`);
    return new NetnsTarget(`host/${name}`, this.names.netnsPath(this.names.host(name)), { commands: this.commands });
  }

  /** A bare namespace of this lab, by its full name. */
  namespaceTarget(ns: string): NetnsTarget {
    return new NetnsTarget(ns, this.names.netnsPath(ns), { commands: this.commands });
  }

  target(ref: string): Target {
    const [kind, name = ''] = ref.split('/');
    if (kind === 'node') return this.node(name);
    if (kind === 'pod') return this.pod(name);
    if (kind === 'host') return this.host(name);
    if (ref === 'fabric') return this.namespaceTarget(this.names.fabric);
    throw new HarnessError('LAB_FAILED', `${ref} is not a node, pod, host or the fabric`);
  }

  address(ref: string): string {
    const ip = this.addresses.get(ref);
    if (!ip) throw new HarnessError('LAB_FAILED', `no address for ${ref}`);
    return ip;
  }

  path(ref: string): string {
    const [kind, node = ''] = ref.split('/');
    if (kind === 'veth') {
      const ifname = this.hostInterfaces.get(node);
      if (!ifname) throw new HarnessError('LAB_FAILED', `no host-side interface for pod ${node}`);
      return ifname;
    }
    if (kind === 'port') {
      const port = this.fabricPorts.get(node);
      if (!port) throw new HarnessError('LAB_FAILED', `no fabric port for node ${node}`);
      return port;
    }
    if (kind === 'bin') {
      const bin = this.bins.get(node);
      if (bin?.path) return bin.path;
      throw new HarnessError(
        'UNSUPPORTED',
        `helper program ${node} is not available: ${bin?.error ?? 'unknown program'}`,
        'install gcc and libc6-dev (npm run preflight)',
      );
    }
    if (kind === 'cgroup' && this.cgroups.has(node)) return this.cgroups.get(node)!;
    if (kind === 'bpffs' && this.mountNamespaces.has(node)) return '/sys/fs/bpf/netrepro';
    throw new HarnessError(
      'UNSUPPORTED',
      `${ref}: node ${node} has no ${kind === 'cgroup' ? 'socket-LB cgroup' : 'bpffs'} in this CNI shape`,
    );
  }

  startTrace(flows: TraceFlows, signal?: AbortSignal): Promise<ProbeTraceSession> {
    return this.traceHandler(this, flows, signal);
  }

  perform(action: LabAction): Promise<void> {
    return this.actionHandler(this, action);
  }

  /**
   * Creates namespaces in one `ip -batch` (recorded first, so a half-done batch is still torn down).
   * Nothing else happens here: each namespace's IPv6 is switched off by `namespaceSysctls` and its
   * loopback brought up by its own first `ip -batch` (or the loopback CNI plugin).
   */
  async createNamespaces(namespaces: readonly string[]): Promise<void> {
    this.registerLabTeardown();
    this.namespaces.push(...namespaces);
    await this.commands.exec(['ip', '-batch', '-'], { input: namespaces.map((ns) => `netns add ${ns}\n`).join('') });
  }

  /**
   * Sets `sysctls` in `ns` and, as in every lab namespace, switches IPv6 off: the incidents are IPv4, and
   * IPv6 neighbour and router chatter would only clutter captures. Then reads the keys in `read`, in the
   * same process (sysctl writes `key=value` arguments and prints plain keys, in order).
   */
  async namespaceSysctls(
    ns: string,
    sysctls: Record<string, string | number> = {},
    read: readonly string[] = [],
  ): Promise<Map<string, string>> {
    const all = { 'net.ipv6.conf.all.disable_ipv6': 1, 'net.ipv6.conf.default.disable_ipv6': 1, ...sysctls };
    const r = await this.namespaceTarget(ns).exec([
      'sysctl',
      '-q',
      ...Object.entries(all).map(([k, v]) => `${k}=${v}`),
      ...read,
    ]);
    const values = new Map<string, string>();
    for (const line of r.stdout.split('\n')) {
      const m = /^(\S+) = (.*)$/.exec(line);
      if (m) values.set(m[1]!, m[2]!);
    }
    return values;
  }

  destroy(): Promise<void> {
    return this.teardown.run();
  }

  async [Symbol.asyncDispose]() {
    await this.destroy();
  }
}

export const CGROUP_ROOT = '/sys/fs/cgroup/unified/netrepro';

export async function removeRunCgroups(runId: string): Promise<void> {
  const runDir = `${CGROUP_ROOT}/${runId}`;
  const nodes = await readdir(runDir).catch(() => [] as string[]);
  for (const node of nodes) {
    const dir = `${runDir}/${node}`;
    if (!/^[a-z]/.test(node)) continue; // cgroup control files
    const procs = await readFile(`${dir}/cgroup.procs`, 'utf8').catch(() => '');
    killAll(procs.split('\n').filter(Boolean).map(Number));
    await rmdirWhenEmpty(dir);
  }
  await rmdir(runDir).catch(() => {});
  await rmdir(CGROUP_ROOT).catch(() => {});
}

/** A cgroup directory can only go once its killed processes have exited (EBUSY until then): retry for up to 2 s. */
async function rmdirWhenEmpty(dir: string): Promise<void> {
  for (let i = 0; i < 40; i++) {
    const error = await rmdir(dir).then(
      () => undefined,
      (e: NodeJS.ErrnoException) => e,
    );
    if (!error || error.code === 'ENOENT' || error.code !== 'EBUSY') return;
    await new Promise((r) => setTimeout(r, 50));
  }
}
