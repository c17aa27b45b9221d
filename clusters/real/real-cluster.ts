// A started real cluster: how to reach its nodes and pods, and the teardown actions recorded as
// each thing was created, run in reverse on destroy (also after a partial provisioning).
import { HarnessError } from '../../harness/model/errors.ts';
import type { LabAction, RunContext, StartedCluster, Target } from '../provider.ts';
import { AGENT_COMMAND } from './workload-objects.ts';

export class RealCluster implements StartedCluster {
  readonly agentCommand = AGENT_COMMAND;
  readonly addresses = new Map<string, string>();
  readonly nodes = new Map<string, Target>();
  readonly pods = new Map<string, Target>();
  private readonly undo: { what: string; action: () => Promise<unknown> }[] = [];
  private destroyed?: Promise<void>;

  constructor(
    readonly nodeNames: readonly string[],
    private readonly run: RunContext,
  ) {}

  /** Register how to undo something just created; destroy() runs these newest first. */
  onDestroy(what: string, action: () => Promise<unknown>): void {
    this.undo.push({ what, action });
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

  target(ref: string): Target {
    const [kind, name = ''] = ref.split('/');
    if (kind === 'node') return this.node(name);
    if (kind === 'pod') return this.pod(name);
    throw new HarnessError('LAB_FAILED', `${ref} is not a node or pod`);
  }

  /** On a real cluster, kube-proxy and cilium are run by the cluster, and BPF programs by cilium. */
  async perform(action: LabAction): Promise<void> {
    const what = action.kind === 'start' ? `starting ${action.component} by hand` : `the lab action ${action.kind}`;
    throw new HarnessError('UNSUPPORTED', `${what} is not possible on a real cluster (its own agents manage that)`, 'run this scenario with --provider netns');
  }

  path(ref: string): string {
    throw new HarnessError('UNSUPPORTED', `${ref}: node cgroup and bpffs paths exist only in the netns lab`, 'run this scenario with --provider netns');
  }

  address(ref: string): string {
    const ip = this.addresses.get(ref);
    if (!ip) throw new HarnessError('LAB_FAILED', `no address for ${ref}`);
    return ip;
  }

  destroy(): Promise<void> {
    this.destroyed ??= this.teardown();
    return this.destroyed;
  }

  async [Symbol.asyncDispose]() {
    await this.destroy();
  }

  private async teardown(): Promise<void> {
    // every action runs even if an earlier one failed; the first failure is reported at the end
    const failures: string[] = [];
    for (const { what, action } of this.undo.reverse()) {
      try {
        await action();
        this.run.log(`teardown: ${what}`);
      } catch (e) {
        failures.push(`${what}: ${(e as Error).message}`);
      }
    }
    if (failures.length) throw new HarnessError('LAB_FAILED', `teardown incomplete: ${failures.join('; ')}`, '`netrepro clean` removes leftovers by the run prefix');
  }
}
