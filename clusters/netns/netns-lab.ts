// A provisioned lab: what it created, how to reach it, and how to take it all down again.
import { rm, rmdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { HarnessError } from '../../harness/model/errors.ts';
import type { TopologySpec } from '../../harness/model/scenario-schema.ts';
import { runCommand, type Spawned } from '../command.ts';
import type { StartedCluster, Target } from '../provider.ts';
import { STATE_ROOT, type LabNames } from './lab-names.ts';
import { NetnsTarget } from './netns-target.ts';

export class NetnsLab implements StartedCluster {
  /** In creation order; destroyed in reverse. */
  readonly namespaces: string[] = [];
  readonly processes: Spawned[] = [];
  readonly addresses = new Map<string, string>();
  /** Host-side interface of each pod (its veth on cni0), for shaping and captures. */
  readonly hostInterfaces = new Map<string, string>();
  readonly agentCommand = ['node', fileURLToPath(new URL('./agent/pod-agent.mjs', import.meta.url))];
  private destroyed?: Promise<void>;

  constructor(
    readonly names: LabNames,
    readonly topology: TopologySpec,
  ) {
    for (const s of topology.services) this.addresses.set(`svc/${s.name}`, s.clusterIP);
  }

  get nodeNames(): readonly string[] {
    return this.topology.nodes.map((n) => n.name);
  }

  node(name: string): NetnsTarget {
    if (!this.topology.nodes.some((n) => n.name === name)) throw new HarnessError('LAB_FAILED', `no node ${name} in this lab`);
    return new NetnsTarget(`node/${name}`, this.names.netnsPath(this.names.node(name)));
  }

  pod(name: string): NetnsTarget {
    if (!this.topology.pods.some((p) => p.name === name)) throw new HarnessError('LAB_FAILED', `no pod ${name} in this lab`);
    return new NetnsTarget(`pod/${name}`, this.names.netnsPath(this.names.pod(name)));
  }

  target(ref: string): Target {
    const [kind, name = ''] = ref.split('/');
    if (kind === 'node') return this.node(name);
    if (kind === 'pod') return this.pod(name);
    throw new HarnessError('LAB_FAILED', `${ref} is not a node or pod`);
  }

  address(ref: string): string {
    const ip = this.addresses.get(ref);
    if (!ip) throw new HarnessError('LAB_FAILED', `no address for ${ref}`);
    return ip;
  }

  async createNamespace(ns: string): Promise<NetnsTarget> {
    await runCommand(['ip', 'netns', 'add', ns]);
    this.namespaces.push(ns);
    const target = new NetnsTarget(ns, this.names.netnsPath(ns));
    // the incidents are IPv4; IPv6 neighbour and router chatter would only clutter captures
    await target.exec(['sysctl', '-q', '-w', 'net.ipv6.conf.all.disable_ipv6=1', 'net.ipv6.conf.default.disable_ipv6=1']);
    await runCommand(['ip', '-n', ns, 'link', 'set', 'lo', 'up']);
    return target;
  }

  destroy(): Promise<void> {
    this.destroyed ??= this.teardown();
    return this.destroyed;
  }

  async [Symbol.asyncDispose]() {
    await this.destroy();
  }

  private async teardown(): Promise<void> {
    await Promise.allSettled(this.processes.map((p) => p.stop('SIGKILL')));
    for (const ns of [...this.namespaces].reverse()) await removeNamespace(ns);
    await rm(this.names.stateDir, { recursive: true, force: true });
    await rmdir(STATE_ROOT).catch(() => {}); // only when no other run is using it
  }
}

/** Kill whatever still runs inside `ns`, then delete it (a namespace with live processes would linger). */
export async function removeNamespace(ns: string): Promise<void> {
  const pids = await runCommand(['ip', 'netns', 'pids', ns], { reject: false });
  const list = pids.stdout.split(/\s+/).filter(Boolean);
  if (list.length > 0) await runCommand(['kill', '-9', ...list], { reject: false });
  await runCommand(['ip', 'netns', 'del', ns], { reject: false });
}
