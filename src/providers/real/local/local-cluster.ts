// A started `local` cluster: the real-cluster layer's RealCluster (pods, Service and endpoint changes through
// the API, teardown stack) plus what a cluster of namespaces on this host can also do: commands on the fabric
// and on hosts outside the cluster, kube-proxy restarted with another configuration, the names of a node's fabric port and a pod's host-side veth, the helper
// programs in the pod image.
import { writeFile } from 'node:fs/promises';
import { HarnessError } from '../../../model/errors.ts';
import type { TopologySpec } from '../../../model/scenario-schema.ts';
import type { KubeProxyConfig, LabAction } from '../../../model/lab-action.ts';
import type { Target } from '../../../contract/provider.ts';
import { HELPERS } from '../../namespaces/helper-build.ts';
import { NETNS_DIR } from '../../namespaces/lab-names.ts';
import { NetnsTarget } from '../../namespaces/netns-target.ts';
import { RealCluster } from '../common/real-cluster.ts';

/** Commands in one of the run's network namespaces, by its name (the host's files, as the netns lab runs them). */
export const namespaceTarget = (ref: string, netns: string): Target => new NetnsTarget(ref, `${NETNS_DIR}/${netns}`);

/** Where the pod image holds the helper programs (scripts/build-kubernetes-images.sh): `{bin/NAME}` runs in a pod. */
const POD_HELPER_DIR = '/netrepro';

export class LocalCluster extends RealCluster {
  readonly hosts = new Map<string, Target>();
  readonly fabricPorts = new Map<string, string>();
  readonly veths = new Map<string, string>();
  fabric?: Target;
  /** The native agent on this machine: nodes and hosts are namespaces here, without the pod image's copy. */
  hostAgent?: readonly string[];
  /** Restarts a node's kube-proxy (the cluster's one build) with its configuration changed by `config`. */
  restartKubeProxy?: (node: string, config: Partial<KubeProxyConfig>) => Promise<void>;

  /** Where `markKept` writes (the run's state directory), set once provisioning made it. */
  keptMark?: string;

  async markKept(): Promise<void> {
    if (this.keptMark) await writeFile(this.keptMark, `${JSON.stringify({ kept: new Date().toISOString() })}\n`);
  }

  override async perform(action: LabAction): Promise<void> {
    if (action.kind === 'start' && action.component === 'kube-proxy' && this.restartKubeProxy)
      return this.restartKubeProxy(action.node, action.config ?? {});
    return super.perform(action);
  }

  agentCommandOn(ref: string): readonly string[] | undefined {
    return ref.startsWith('pod/') ? this.agentCommand : this.hostAgent;
  }

  override target(ref: string): Target {
    if (ref === 'fabric' && this.fabric) return this.fabric;
    if (ref.startsWith('host/')) {
      const host = this.hosts.get(ref.slice(5));
      if (!host) throw new HarnessError('LAB_FAILED', `no host ${ref.slice(5)} in this cluster`);
      return host;
    }
    return super.target(ref);
  }

  override path(ref: string): string {
    const [kind, name = ''] = ref.split('/');
    const found = kind === 'port' ? this.fabricPorts.get(name) : kind === 'veth' ? this.veths.get(name) : undefined;
    if (found) return found;
    if (kind === 'bin') {
      if (!(HELPERS as readonly string[]).includes(name))
        throw new HarnessError(
          'SCENARIO_INVALID',
          `{bin/${name}}: no such helper program (there are: ${HELPERS.join(', ')})`,
        );
      return `${POD_HELPER_DIR}/${name}`;
    }
    return super.path(ref);
  }

  /** Each pod's host-side veth (what `{veth/POD}` names): the node's interface whose index is the pod's eth0 peer. */
  async resolveVeths(topology: TopologySpec): Promise<void> {
    await Promise.all(
      topology.pods.map(async (pod) => {
        const peer = (await this.pod(pod.name).exec(['cat', '/sys/class/net/eth0/iflink'])).stdout.trim();
        const links = (await this.node(pod.node).exec(['ip', '-o', 'link', 'show'])).stdout;
        const name = new RegExp(`^${peer}: ([^:@]+)`, 'm').exec(links)?.[1];
        if (!name) throw new HarnessError('LAB_FAILED', `pod ${pod.name}: no interface ${peer} on node ${pod.node}`);
        this.veths.set(pod.name, name);
      }),
    );
  }
}
