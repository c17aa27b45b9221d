// The contract every cluster provider implements. The engine only sees these types.
import type { TopologySpec } from '../harness/model/scenario-schema.ts';
import type { ProbeTraceSession, TraceFlows } from '../harness/model/trace-events.ts';
import type { ExecOptions, ExecResult, Spawned, SpawnOptions } from './command.ts';

export type ProviderName = 'netns' | 'kind' | 'minikube' | 'k3s';

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

export interface ClusterProvider {
  readonly name: ProviderName;
  /** Whether this provider can run here; never fall back silently to another one. */
  detect(): Promise<Availability>;
  provision(topology: TopologySpec, run: RunContext): Promise<StartedCluster>;
}

/** Node-level operations that are not a plain command: each provider maps them to its own means. */
export type { LabAction } from '../harness/model/lab-action.ts';
import type { LabAction } from '../harness/model/lab-action.ts';

export interface StartedCluster extends AsyncDisposable {
  readonly nodeNames: readonly string[];
  node(name: string): Target;
  pod(name: string): Target;
  /** pod/x, svc/y, node/z -> IPv4 address. */
  address(ref: string): string;
  /** argv prefix that runs our pod agent (clusters/netns/agent/pod-agent.mjs) inside a pod. */
  readonly agentCommand: readonly string[];
  /** Resolve `pod/x` or `node/x` to its Target. */
  target(ref: string): Target;
  /** Performs a lab action; throws HarnessError UNSUPPORTED (the scenario is then skipped) where it cannot. */
  perform(action: LabAction): Promise<void>;
  /**
   * Names for commands that are not addresses: `cgroup/NODE` (the node's pod cgroup), `bpffs/NODE` (its
   * bpffs pin directory), `veth/POD` (the pod's host-side interface), `port/NODE` (the node's port on the
   * nodes' network, seen from the fabric), `bin/NAME` (a helper program built at set-up).
   */
  path(ref: string): string;
  /** Traces one probe's packets in the lab's namespaces (rule verdicts, drop reasons, conntrack); absent where a provider cannot. */
  startTrace?(flows: TraceFlows, signal?: AbortSignal): Promise<ProbeTraceSession>;
  /** Idempotent, reverse order, survives partial provisioning. */
  destroy(): Promise<void>;
}
