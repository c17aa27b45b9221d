// A started real cluster: how to reach its nodes and pods, and the teardown actions recorded as
// each thing was created, run in reverse on destroy (also after a partial provisioning): a TeardownStack.
import { HarnessError } from '../../../model/errors.ts';
import type { LabAction, RunContext, StartedCluster, Target } from '../../../contract/provider.ts';
import { TeardownStack } from '../../../contract/teardown-stack.ts';
import { kubeProxySyncs } from './kube-proxy-syncs.ts';
import type { ServiceChanges } from './service-changes.ts';
import { AGENT_COMMAND, clusterNamespace } from './workload-objects.ts';

export class RealCluster implements StartedCluster {
  readonly addresses = new Map<string, string>();
  readonly nodes = new Map<string, Target>();
  readonly pods = new Map<string, Target>();
  /** Service and endpoint changes through the API, set once the workload is up. */
  services?: ServiceChanges;
  /** The range the cluster allocates ClusterIPs from, where it is not kubeadm's default. */
  serviceCIDR?: string;
  /** What the scenario's namespaces are prefixed with here (none on a cluster of the run's own). */
  namespacePrefix = '';
  private readonly teardown: TeardownStack;

  constructor(
    readonly nodeNames: readonly string[],
    run: RunContext,
    readonly agentCommand: readonly string[] = AGENT_COMMAND,
  ) {
    this.teardown = new TeardownStack(run.log);
  }

  /** Register how to undo something just created; destroy() runs these newest first. */
  onDestroy(what: string, action: () => Promise<unknown>): void {
    this.teardown.push(what, action);
  }

  node(name: string): Target {
    const t = this.nodes.get(name);
    if (!t) throw new HarnessError('LAB_FAILED', `no node ${name} in this cluster`);
    return t;
  }

  pod(name: string): Target {
    const t = this.pods.get(name);
    if (!t) throw new HarnessError('LAB_FAILED', `no pod ${name} in this cluster`);
    return t;
  }

  kubeProxySyncs(node: string, settled?: boolean): Promise<number | undefined> {
    return kubeProxySyncs(this.node(node), settled);
  }

  target(ref: string): Target {
    const [kind, name = ''] = ref.split('/');
    if (kind === 'node') return this.node(name);
    if (kind === 'pod') return this.pod(name);
    throw new HarnessError('LAB_FAILED', `${ref} is not a node or pod`);
  }

  /**
   * Service and endpoint changes go through the API; kube-proxy and cilium are run by the cluster, and BPF
   * programs by cilium.
   */
  async perform(action: LabAction): Promise<void> {
    if ((action.kind === 'endpoint' || action.kind === 'service') && this.services)
      return this.services.perform(action);
    if (action.kind === 'delete' && this.services) {
      await this.services.deletePod(action.pod);
      this.pods.delete(action.pod);
      return;
    }
    const what = action.kind === 'start' ? `starting ${action.component} by hand` : `the lab action ${action.kind}`;
    throw new HarnessError(
      'UNSUPPORTED',
      `${what} is not possible on a real cluster (its own agents manage that)`,
      'run this scenario with --provider netns',
    );
  }

  path(ref: string): string {
    throw new HarnessError(
      'UNSUPPORTED',
      `${ref}: node cgroup and bpffs paths exist only in the netns lab`,
      'run this scenario with --provider netns',
    );
  }

  namespace(name: string): string {
    return clusterNamespace(this.namespacePrefix, name);
  }

  address(ref: string): string {
    const ip = this.addresses.get(ref);
    if (!ip) throw new HarnessError('LAB_FAILED', `no address for ${ref}`);
    return ip;
  }

  destroy(): Promise<void> {
    return this.teardown.run();
  }

  async [Symbol.asyncDispose]() {
    await this.destroy();
  }
}
