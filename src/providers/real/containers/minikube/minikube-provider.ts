// minikube (docker driver): one profile per scenario lab, its CNI installed (minikube-create.ts), then what
// container nodes get (equip-container-nodes.ts): on cilium the hold affinity on kube-proxy's and Cilium's
// DaemonSets, and the hosts as containers on the profile's docker network.
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
import { kubeconfigFollowingApi } from '../kubeconfig-following-api.ts';
import { reapRuns } from '../reap-leftovers.ts';
import { cleanMinikubeLeftovers } from './clean-minikube-leftovers.ts';
import { createMinikubeCluster, installMinikubeCni } from './minikube-create.ts';
import { restartMinikubeNode } from './minikube-reboot.ts';

export class MinikubeProvider extends ContainerProvider<'minikube'> implements ClusterProvider {
  constructor(
    options: RealClusterOptions | ResolvedRealOptions = {},
    private readonly deps: RealProviderDeps = {},
  ) {
    super('minikube', options, ['docker', 'minikube', 'kubectl']);
  }

  async provision(topology: TopologySpec, run: RunContext): Promise<StartedCluster> {
    assertFits('minikube', this.fit(topology));
    const cni = clusterCni(topology, this.options);
    const load = await defaultKubeApi(this.deps);
    // a restart publishes the API server on another host port, written into the kubeconfig (minikube-reboot.ts)
    const kube = guardedKube(clusterName(run), this.options, (access) => kubeconfigFollowingApi(access, load));
    const cluster = new ContainerNodeCluster(scenarioNodeNames(topology), run);
    try {
      const { profile, access, nodes } = await createMinikubeCluster({
        topology,
        cni,
        run,
        cluster,
        options: this.options,
      });
      const kubectl = kube.cli(access);
      const api = kube.api(access);
      await installMinikubeCni({ topology, cni, kubectl, api, options: this.options });
      await waitNodesReady(kubectl);
      await equipContainerNodes({
        topology,
        cni,
        run,
        cluster,
        kubectl,
        api,
        // the docker driver puts a profile's node containers on a network of its own, named after it
        network: profile,
        options: this.options,
        nodes,
        restartNode: restartMinikubeNode({ profile, kubeconfig: access.kubeconfig, run }),
        ...(this.deps.readyTimeoutMs ? { readyTimeoutMs: this.deps.readyTimeoutMs } : {}),
      });
      const nodeMap = await adoptNodes(cluster, topology, nodes);
      const listed = await readNodeAddresses(cluster, api, nodeMap);
      await startWorkload({
        provider: 'minikube',
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
    const minikube = await onPath('minikube');
    return reapRuns(this.options.workDir, force, async (removable) =>
      minikube ? cleanMinikubeLeftovers(removable) : [],
    );
  }
}
