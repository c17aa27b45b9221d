// kind: a Kubernetes-in-Docker cluster per scenario lab, the scenario's CNI shape installed on it (kind-create.ts),
// then what container nodes get (equip-container-nodes.ts): on cilium the hold affinity on kube-proxy's and
// Cilium's DaemonSets (so a reboot can start them in order), the hosts as containers on kind's network.
import type { TopologySpec } from '../../../../model/scenario-schema.ts';
import type { ClusterProvider, RunContext, StartedCluster } from '../../../../contract/provider.ts';
import {
  adoptNodes,
  assertFits,
  clusterCni,
  clusterName,
  defaultKubeApi,
  destroyAfterFailure,
  guardedKube,
  readNodeAddresses,
  scenarioNodeNames,
  startWorkload,
  type RealProviderDeps,
} from '../../common/provision-steps.ts';
import type { RealClusterOptions, ResolvedRealOptions } from '../../common/real-options.ts';
import { onPath } from '../cli-tools.ts';
import { waitNodesReady } from '../cni-install.ts';
import { ContainerNodeCluster } from '../container-node-cluster.ts';
import { ContainerProvider } from '../container-provider.ts';
import { equipContainerNodes } from '../equip-container-nodes.ts';
import { removableRuns } from '../reap-leftovers.ts';
import { cleanKindLeftovers } from './clean-kind-leftovers.ts';
import { KIND_NETWORK, kindContext } from './kind-config.ts';
import { createKindCluster, installKindCni } from './kind-create.ts';
import { restartKindNode } from './kind-reboot.ts';

export class KindProvider extends ContainerProvider<'kind'> implements ClusterProvider {
  constructor(
    options: RealClusterOptions | ResolvedRealOptions = {},
    private readonly deps: RealProviderDeps = {},
  ) {
    super('kind', options, ['docker', 'kind', 'kubectl']);
  }

  async provision(topology: TopologySpec, run: RunContext): Promise<StartedCluster> {
    assertFits('kind', this.fit(topology));
    const cni = clusterCni(topology, this.options);
    const kube = guardedKube(kindContext(clusterName(run)), this.options, await defaultKubeApi(this.deps));
    const cluster = new ContainerNodeCluster(scenarioNodeNames(topology), run);
    try {
      const { access, nodes } = await createKindCluster({ topology, cni, run, cluster, options: this.options });
      const kubectl = kube.cli(access);
      const api = kube.api(access);
      await installKindCni({ topology, cni, kubectl, api, nodes, options: this.options, run });
      await waitNodesReady(kubectl);
      await equipContainerNodes({
        topology,
        cni,
        run,
        cluster,
        kubectl,
        api,
        network: KIND_NETWORK,
        options: this.options,
        nodes,
        restartNode: restartKindNode(run),
        ...(this.deps.readyTimeoutMs ? { readyTimeoutMs: this.deps.readyTimeoutMs } : {}),
      });
      const nodeMap = await adoptNodes(cluster, topology, nodes);
      const listed = await readNodeAddresses(cluster, api, nodeMap);
      await startWorkload({
        provider: 'kind',
        api,
        cluster,
        topology,
        nodeMap,
        images: this.options,
        run,
        cni,
        listed,
      });
      return cluster;
    } catch (e) {
      await destroyAfterFailure(cluster, run);
      throw e;
    }
  }

  async reap({ force }: { force: boolean }): Promise<string[]> {
    if (!(await onPath('kind'))) return [];
    return cleanKindLeftovers(removableRuns(this.options.workDir, force));
  }
}
