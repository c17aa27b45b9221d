// A started cluster whose nodes are docker containers (kind, minikube's docker driver, k3s): the real-cluster
// layer's RealCluster plus what such nodes allow: hosts outside the cluster (containers on the cluster's docker
// network, docker-hosts.ts), and starting a node component by hand or rebooting a node (node-components.ts:
// the DaemonSet's pod replaced, the node's container restarted).
import { HarnessError } from '../../../model/errors.ts';
import type { LabAction, SnatTable, Target } from '../../../contract/provider.ts';
import type { NodeComponents } from './node-components.ts';
import { RealCluster } from '../common/real-cluster.ts';

export class ContainerNodeCluster extends RealCluster {
  readonly hosts = new Map<string, Target>();
  /** Set once the cluster's components are up. */
  components?: NodeComponents;
  /** A node's BPF SNAT table by scenario node name: set on the cilium shape, read through the node's agent. */
  snatTables?: (node: string) => SnatTable;

  override target(ref: string): Target {
    if (ref.startsWith('host/')) {
      const host = this.hosts.get(ref.slice(5));
      if (!host) throw new HarnessError('LAB_FAILED', `no host ${ref.slice(5)} in this cluster`);
      return host;
    }
    return super.target(ref);
  }

  snatTable(node: string): SnatTable {
    if (!this.snatTables)
      throw new HarnessError(
        'UNSUPPORTED',
        `node ${node} runs no Cilium: it has no BPF SNAT table`,
        'a cilium scenario',
      );
    return this.snatTables(node);
  }

  override async perform(action: LabAction): Promise<void> {
    if (action.kind === 'start' && this.components)
      return this.components.start(action.node, action.component, action.version);
    if (action.kind === 'reboot' && this.components) return this.components.reboot(action.node, action.order);
    return super.perform(action);
  }
}
