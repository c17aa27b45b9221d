// The contract every cluster provider implements. The engine only sees these types.
import type { Capability } from '../model/capabilities.ts';
import type { Scenario, TopologySpec } from '../model/scenario-schema.ts';
import type { ProbeTraceSession, TraceFlows } from '../model/trace-events.ts';
import type { ExecOptions, ExecResult, Spawned, SpawnOptions } from './command.ts';

export type ProviderName = 'netns' | 'local' | 'kind' | 'minikube' | 'k3s';

export type Availability = { ok: true } | { ok: false; reason: string; hint: string };

/** Somewhere commands run: a node or a pod. Probes and faults only ever see this. */
export interface Target {
  /** `node/NAME` or `pod/NAME`. */
  readonly ref: string;
  exec(argv: readonly string[], options?: ExecOptions): Promise<ExecResult>;
  spawn(argv: readonly string[], options?: SpawnOptions): Spawned;
}

export interface RunContext {
  /** Unique per run; every name the lab creates starts with `prefix`. */
  readonly runId: string;
  readonly prefix: string;
  readonly signal: AbortSignal;
  log(line: string): void;
}

/** Why a provider cannot stand for a scenario, with what to do instead. */
export interface Misfit {
  reason: string;
  hint?: string;
}

/**
 * What a provider can do, known without provisioning anything (and without loading its libraries): the
 * engine and `validate --provider` compare a scenario's requirements with it before a lab exists.
 */
export interface ProviderSupport {
  readonly name: ProviderName;
  /** Everything a scenario may need beyond pods and probes that this provider can do (src/model/capabilities.ts). */
  readonly capabilities: ReadonlySet<Capability>;
  /** A topology this provider cannot stand for (a CNI shape, a node count, a kube-proxy layout its release lacks). */
  fit(topology: TopologySpec): Misfit | undefined;
  /** A step it cannot perform as the file writes it, known from the file (a kube-proxy release to start). */
  fitSteps?(scenario: Scenario): Misfit | undefined;
  /** Why it lacks a capability, where that is its own make-up rather than work not done: said in the skip reason. */
  readonly lacksBecause?: Partial<Record<Capability, string>>;
}

export interface ClusterProvider extends ProviderSupport {
  /** Whether this provider can run here; never fall back silently to another one. */
  detect(): Promise<Availability>;
  provision(topology: TopologySpec, run: RunContext): Promise<StartedCluster>;
  /**
   * Removes what earlier runs of this provider left behind, found by the run prefix; a run whose owner
   * process is alive is kept unless `force`. Returns what was removed, one line each.
   */
  reap(options: { force: boolean }): Promise<string[]>;
  /** Runs whose owner is alive, which `reap` without force leaves alone, one line each (where the provider can tell). */
  liveRuns?(): Promise<string[]>;
  /**
   * Each lab is a whole cluster (a control plane and its daemons, ~0.8 GB, busy while it starts): `--parallel N`
   * then bounds the run's labs to N, fix variants included. Without it, a scenario's fix variants also run
   * side by side, as netns labs mostly wait on the wire.
   */
  readonly labsAreClusters?: boolean;
}

/** Node-level operations that are not a plain command: each provider maps them to its own means. */
export type { LabAction } from '../model/lab-action.ts';
import type { LabAction } from '../model/lab-action.ts';

/**
 * Where a node's BPF SNAT table is read: each provider its own way (the lab's pinned map with bpftool, a real
 * node's through its Cilium agent), each entry printed one a line as `cilium-dbg bpf nat list` prints it
 * (src/dataplane/cilium-nat-list.ts), so one `snat` check reads the same on both.
 */
export interface SnatTable {
  /** Where the command runs. */
  target: Target;
  argv: string[];
  /** The command's output as entry lines in `cilium-dbg bpf nat list`'s format. */
  entries(stdout: string): string[];
}

export interface StartedCluster extends AsyncDisposable {
  readonly nodeNames: readonly string[];
  node(name: string): Target;
  pod(name: string): Target;
  /** pod/x, svc/y, node/z -> IPv4 address. */
  address(ref: string): string;
  /**
   * A scenario namespace as this cluster names it (`{ns/NAME}`): the lab's and a cluster of the run's own as
   * written, a shared cluster's with the run prefix. Every provider resolves it.
   */
  namespace(name: string): string;
  /** The range the cluster allocates ClusterIPs from (`{cidr/services}`), where it is not kubeadm's 10.96.0.0/12. */
  readonly serviceCIDR?: string;
  /**
   * argv prefix that runs our pod agent inside a pod: src/providers/netns/agent/pod-agent.mjs, or (netns lab)
   * its native twin pod-agent.c, with the same subcommands, arguments and output.
   */
  readonly agentCommand: readonly string[];
  /**
   * The agent as `ref` (pod/, node/ or host/NAME) runs it: agentCommand unless said otherwise; a node runs one
   * only where its provider declares `node-agent` (a kind node's image has none: undefined).
   */
  agentCommandOn?(ref: string): readonly string[] | undefined;
  /** Resolve `pod/x` or `node/x` to its Target. */
  target(ref: string): Target;
  /** Performs a lab action its provider declares (`action/KIND`); throws HarnessError UNSUPPORTED for any other. */
  perform(action: LabAction): Promise<void>;
  /**
   * Lab names for placeholders that are not addresses (`{veth/POD}`, `{cgroup/NODE}`...). Only the kinds
   * its provider declares (`path/KIND`) are ever asked for; any other throws HarnessError UNSUPPORTED.
   */
  path(ref: string): string;
  /**
   * How many times the node's kube-proxy has rewritten its rules so far (its sync count), where it says: each
   * rewrite starts the counters of the chains it writes again from zero. `settled`: once no sync is pending. Undefined
   * where it cannot be read; absent where nothing rewrites rules behind the scenario's back (the lab renders them
   * at its steps only).
   */
  kubeProxySyncs?(node: string, settled?: boolean): Promise<number | undefined>;
  /** A node's BPF SNAT table; asked for only where its provider declares `snat-table`, else throws UNSUPPORTED. */
  snatTable?(node: string): SnatTable;
  /** Traces one probe's packets in the lab's namespaces (rule verdicts, drop reasons, conntrack); absent where a provider cannot. */
  startTrace?(flows: TraceFlows, signal?: AbortSignal): Promise<ProbeTraceSession>;
  /**
   * The run ends and leaves this lab up (`run --keep`): marked so that `netrepro clean` without --force leaves it
   * alone though its owner has ended (`clean --force` or `clean --run ID` removes it). Absent where a provider keeps
   * no such mark.
   */
  markKept?(): Promise<void>;
  /** Idempotent, reverse order, survives partial provisioning. */
  destroy(): Promise<void>;
}
