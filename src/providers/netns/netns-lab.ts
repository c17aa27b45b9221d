// A provisioned lab: what it created, how to reach it, and how to take it all down again. Provisioning builds
// it and hands it out read-only (its inventory and lists are its own). What steps change later changes through
// named methods: the lab's topology (Services, a node's CNI chain) and the kube-proxy release a `start` put on
// a node through the lab's, its pods' sandboxes through its PodSandboxes (pod-network.ts).
import { rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { dnsRecords } from '../../contract/agent-program.ts';
import { labClusterObjects } from '../../contract/lab-cluster-objects.ts';
import { HarnessError } from '../../model/errors.ts';
import { sysctlName } from './node-sysctls.ts';
import type { TopologySpec } from '../../model/scenario-schema.ts';
import type { CommandRunner, Spawned } from '../../contract/command.ts';
import type { LabAction, SnatTable, StartedCluster, Target } from '../../contract/provider.ts';
import { TeardownStack } from '../../contract/teardown-stack.ts';
import { bootKubeProxy, type KubeProxySettings } from '../../dataplane/node-iptables.ts';
import { STATE_ROOT, type LabNames } from '../namespaces/lab-names.ts';
import { removeNamespaces } from '../namespaces/namespace-batch.ts';
import { type LabInventory, NODE_AGENT_COMMAND, type ReadonlyLabInventory } from './lab-inventory.ts';
import type { LabCommands } from './native-commands.ts';
import { removeRunCgroups } from './run-cgroups.ts';
import { LAB_SNAT_MAP, labNatEntries } from './lab-nat-entries.ts';
import { NetnsTarget } from '../namespaces/netns-target.ts';
import { PodSandboxes } from './pod-network.ts';
import { LabTracer } from './trace/lab-tracer.ts';
import type { ProbeTraceSession, TraceFlows } from '../../model/trace-events.ts';
import { ServiceHealthServers } from './service-health-servers.ts';

/** What a lab action does on this lab; given by the provisioning code that knows the CNI shape. */
export type ActionHandler = (lab: NetnsLab, action: LabAction) => Promise<void>;

/** What a lab is made with: its names, topology and inventory, its commands, and how it performs actions. */
export interface NetnsLabParts {
  /** Every name the lab creates, carrying the run prefix. */
  names: LabNames;
  /** The topology it is built from; its Services then change with `endpoint` and `service` steps (replaceServices). */
  topology: TopologySpec;
  /** What provisioning records of each part as it makes it; the lab reads it, and its sandboxes record into it. */
  inventory: LabInventory;
  /** What a lab action (start a component, a Service change, a stale program) does here. */
  perform: ActionHandler;
  /** The lab's command runner (its own spawner), ended as the last step of its teardown. */
  commands: LabCommands;
}

export class NetnsLab implements StartedCluster {
  readonly names: LabNames;
  /** What provisioning and the lab's sandboxes recorded of its parts. */
  readonly inventory: ReadonlyLabInventory;
  /** The pods' sandboxes through their node's CNI chain (bridge and flannel shapes): made, chained, deleted, made again. */
  readonly sandboxes: PodSandboxes;
  /** Runs the lab's commands: its targets' and those it runs in the root namespace (`ip -n`, CNI plugins). */
  readonly commands: CommandRunner;
  /** The probe trace of this lab: started by provisioning, asked by each probe (startTrace). */
  readonly tracer: LabTracer;
  /** kube-proxy's service health servers on the lab's nodes, kept in step with its syncs. */
  readonly serviceHealth: ServiceHealthServers;
  /** What test/lab/native-agent.test.ts compares the lab's native agent with. */
  readonly nodeAgentCommand = NODE_AGENT_COMMAND;
  /** The topology as the lab's steps left it. */
  private current: TopologySpec;
  /** Node -> the kube-proxy release a `start` step put there (else the topology's). */
  private readonly kubeProxies = new Map<string, KubeProxySettings>();
  /** In creation order; removed in one batch. */
  private readonly namespaces: string[] = [];
  private readonly processes: Spawned[] = [];
  /** Pod -> the processes that run in it (its servers), stopped when a step deletes it. */
  private readonly podProcesses = new Map<string, Spawned[]>();
  /** Pods a `delete` step deleted, for the error that names one later. */
  private readonly deletedPods = new Set<string>();
  private readonly actionHandler: ActionHandler;
  /** What the lab created, undone newest first: its processes, its namespaces, its cgroups, its state. */
  private readonly teardown: TeardownStack;
  private labEntries = false;

  constructor({ names, topology, inventory, perform, commands }: NetnsLabParts) {
    this.names = names;
    this.current = topology;
    this.inventory = inventory;
    this.sandboxes = new PodSandboxes(this, inventory);
    this.actionHandler = perform;
    this.commands = commands.runner;
    this.tracer = new LabTracer(this);
    this.serviceHealth = new ServiceHealthServers(this);
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

  get topology(): TopologySpec {
    return this.current;
  }

  /** An `endpoint` or `service` step changed the Services: the lab's copy follows. */
  replaceServices(services: TopologySpec['services']): void {
    this.current = { ...this.current, services };
  }

  /** A `cni-chain` step changed `node`'s network config list: sandboxes made from now on go through `plugins`. */
  replaceCniChain(node: string, plugins: NonNullable<TopologySpec['nodes'][number]['cniChain']>): void {
    this.current = {
      ...this.current,
      nodes: this.current.nodes.map((n) => (n.name === node ? { ...n, cniChain: plugins } : n)),
    };
  }

  /** The kube-proxy `node` runs: the one a `start` step put there, else the topology's. */
  kubeProxy(node: string): KubeProxySettings {
    return this.kubeProxies.get(node) ?? bootKubeProxy(this.current);
  }

  /** A `start` step started kube-proxy on `node`: another release or configuration, or the same one again. */
  kubeProxyStarted(node: string, proxy: KubeProxySettings): void {
    this.kubeProxies.set(node, proxy);
  }

  /** A reboot brings `node` back to the topology's components, releases and configuration. */
  nodeRebooted(node: string): void {
    this.kubeProxies.delete(node);
  }

  /** The cluster DNS's records, one `NAME=IP` a line: the lab's DNS programs read it for every query. */
  get dnsRecordsFile(): string {
    return join(this.names.stateDir, 'dns-records');
  }

  /** Writes the records as the Services and endpoints now are (CoreDNS follows them through its watch). */
  async writeDnsRecords(): Promise<void> {
    const records = dnsRecords(
      this.current,
      (svc) => this.address(`svc/${svc}`),
      (pod) => this.address(`pod/${pod}`),
    );
    await writeFile(this.dnsRecordsFile, records.map((r) => `${r}\n`).join(''));
    await this.writeClusterObjects();
  }

  /**
   * The cluster objects the lab stands for, as the Services now are, beside its state (removed with it): a lab has
   * no API server, and `netrepro capture --run` reads them from here for a kept lab.
   */
  private async writeClusterObjects(): Promise<void> {
    const objects = labClusterObjects(this.current, (ref) => this.inventory.address(ref));
    await writeFile(this.names.clusterObjects, `${JSON.stringify(objects)}\n`);
  }

  async markKept(): Promise<void> {
    await writeFile(this.names.keptMark, `${JSON.stringify({ kept: new Date().toISOString() })}\n`);
  }

  /** The pod agent's argv: the native agent once built, else pod-agent.mjs. */
  get agentCommand(): readonly string[] {
    return this.inventory.agentCommand;
  }

  /** Pods, nodes and hosts are namespaces on this machine alike: the same agent runs in each. */
  agentCommandOn(): readonly string[] {
    return this.inventory.agentCommand;
  }

  /** A process of this lab (pod agent, bpffs holder, trace monitor): killed at teardown before the namespaces go. */
  track(process: Spawned, pod?: string): void {
    this.registerLabTeardown();
    this.processes.push(process);
    if (pod) this.podProcesses.set(pod, [...(this.podProcesses.get(pod) ?? []), process]);
  }

  /**
   * A `delete` step deleted `pod`: it leaves the topology and every Service's endpoints, and its processes are
   * killed (its namespace stays until teardown, empty once its sandbox is gone).
   */
  async podDeleted(pod: string): Promise<void> {
    this.deletedPods.add(pod);
    this.current = {
      ...this.current,
      pods: this.current.pods.filter((p) => p.name !== pod),
      services: this.current.services.map((s) => ({ ...s, endpoints: s.endpoints.filter((e) => e.pod !== pod) })),
    };
    await Promise.allSettled((this.podProcesses.get(pod) ?? []).map((p) => p.stop('SIGKILL')));
    this.podProcesses.delete(pod);
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
      mountNs: this.inventory.bpffsHolder(name),
    });
  }

  pod(name: string): NetnsTarget {
    const pod = this.topology.pods.find((p) => p.name === name);
    if (!pod && this.deletedPods.has(name))
      throw new HarnessError('STEP_FAILED', `pod ${name} was deleted by a delete step: nothing runs in it any more`);
    if (!pod) throw new HarnessError('LAB_FAILED', `no pod ${name} in this lab`);
    return new NetnsTarget(`pod/${name}`, this.names.netnsPath(this.names.pod(name)), {
      commands: this.commands,
      cgroup: this.inventory.socketLbCgroup(pod.node),
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
    const ip = this.inventory.address(ref);
    if (!ip) throw new HarnessError('LAB_FAILED', `no address for ${ref}`);
    return ip;
  }

  /** The lab's kube-proxy rules name Services by the scenario's namespaces as written. */
  namespace(name: string): string {
    return name;
  }

  path(ref: string): string {
    const [kind, node = ''] = ref.split('/');
    if (kind === 'veth') {
      const ifname = this.inventory.podInterface(node);
      if (!ifname) throw new HarnessError('LAB_FAILED', `no host-side interface for pod ${node}`);
      return ifname;
    }
    if (kind === 'port') {
      const port = this.inventory.fabricPort(node);
      if (!port) throw new HarnessError('LAB_FAILED', `no fabric port for node ${node}`);
      return port;
    }
    if (kind === 'bin') {
      const bin = this.inventory.helper(node);
      if (bin?.path) return bin.path;
      throw new HarnessError(
        'UNSUPPORTED',
        `helper program ${node} is not available: ${bin?.error ?? 'unknown program'}`,
        'install gcc and libc6-dev (npm run preflight)',
      );
    }
    const cgroup = kind === 'cgroup' ? this.inventory.socketLbCgroup(node) : undefined;
    if (cgroup) return cgroup;
    if (kind === 'bpffs' && this.inventory.bpffsHolder(node)) return '/sys/fs/bpf/netrepro';
    throw new HarnessError(
      'UNSUPPORTED',
      `${ref}: node ${node} has no ${kind === 'cgroup' ? 'socket-LB cgroup' : 'bpffs'} in this CNI shape`,
    );
  }

  /** The node's pinned SNAT map, dumped in its bpffs holder's mount namespace. */
  snatTable(node: string): SnatTable {
    return {
      target: this.node(node),
      argv: ['bpftool', '--nomount', '-j', 'map', 'dump', 'pinned', `${this.path(`bpffs/${node}`)}/${LAB_SNAT_MAP}`],
      entries: labNatEntries,
    };
  }

  startTrace(flows: TraceFlows, signal?: AbortSignal): Promise<ProbeTraceSession> {
    return this.tracer.startProbe(flows, signal);
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
      ...Object.entries(all).map(([k, v]) => `${sysctlName(k)}=${v}`),
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
