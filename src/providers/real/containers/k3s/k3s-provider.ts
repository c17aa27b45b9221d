// k3s in one container (testcontainers' K3sContainer) on docker's default network, one node only (k3s-create.ts):
//   flannel: k3s's own kube-proxy and flannel inside its process; the hosts outside the cluster as containers on
//            the same network (docker-hosts.ts)
//   cilium:  upstream kube-proxy and Cilium as DaemonSets, then the hold affinity on both, the hosts, and
//            components started by hand or in order after the node's container restarts (equip-container-nodes.ts,
//            k3s-reboot.ts)
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
import { CliNodeTarget, dockerNode, K3S_FROM_PROBE_IMAGE } from '../cli-node-target.ts';
import { onPath } from '../cli-tools.ts';
import { waitNodesReady } from '../cni-install.ts';
import { ContainerNodeCluster } from '../container-node-cluster.ts';
import { ContainerProvider } from '../container-provider.ts';
import { addDockerHosts, equipContainerNodes } from '../equip-container-nodes.ts';
import { kubeconfigFollowingApi } from '../kubeconfig-following-api.ts';
import { reapRuns } from '../reap-leftovers.ts';
import { cleanK3sLeftovers } from './clean-k3s-leftovers.ts';
import { K3S_NETWORK } from './k3s-config.ts';
import { createK3sCluster, installK3sCni, startK3sWithTestcontainers, type StartK3s } from './k3s-create.ts';
import { restartK3sNode } from './k3s-reboot.ts';

export class K3sProvider extends ContainerProvider<'k3s'> implements ClusterProvider {
  constructor(
    options: RealClusterOptions | ResolvedRealOptions = {},
    private readonly deps: RealProviderDeps & { startK3s?: StartK3s } = {},
  ) {
    super('k3s', options, ['docker', 'kubectl']);
  }

  async provision(topology: TopologySpec, run: RunContext): Promise<StartedCluster> {
    assertFits('k3s', this.fit(topology));
    const cni = clusterCni(topology, this.options);
    const load = await defaultKubeApi(this.deps);
    // a restart publishes the API server on another host port, written into the kubeconfig (k3s-reboot.ts)
    const kube = guardedKube(clusterName(run), this.options, (access) => kubeconfigFollowingApi(access, load));
    const cluster = new ContainerNodeCluster(scenarioNodeNames(topology), run);
    cluster.serviceCIDR = '10.43.0.0/16'; // k3s' default --service-cidr
    try {
      const { name, dir, access } = await createK3sCluster({
        topology,
        cni,
        run,
        cluster,
        options: this.options,
        start: this.deps.startK3s ?? startK3sWithTestcontainers,
      });
      const kubectl = kube.cli(access);
      const api = kube.api(access);
      const [node] = await api.listNodes();
      await installK3sCni({ topology, cni, kubectl, node, dir, options: this.options });
      await waitNodesReady(kubectl);
      const nodes = [
        {
          name: node?.name ?? name,
          target: (ref: string) =>
            new CliNodeTarget(ref, dockerNode(name, this.options.probeImage, run.runId, K3S_FROM_PROBE_IMAGE)),
        },
      ];
      const equip = { topology, run, cluster, network: K3S_NETWORK, options: this.options };
      if (cni === 'cilium')
        await equipContainerNodes({
          ...equip,
          cni,
          kubectl,
          api,
          nodes,
          restartNode: restartK3sNode({ container: name, kubeconfig: access.kubeconfig, run }),
          ...(this.deps.readyTimeoutMs ? { readyTimeoutMs: this.deps.readyTimeoutMs } : {}),
        });
      else await addDockerHosts(equip);
      const nodeMap = await adoptNodes(cluster, topology, nodes);
      const listed = await readNodeAddresses(cluster, api, nodeMap);
      await startWorkload({ provider: 'k3s', api, cluster, topology, nodeMap, images: this.options, run, cni, listed });
      return cluster;
    } catch (e) {
      await destroyAfterFailure(cluster, run);
      throw e;
    }
  }

  /** k3s containers and every provider's tcpdump/conntrack helper containers: by their docker label. */
  async reap({ force }: { force: boolean }): Promise<string[]> {
    const docker = await onPath('docker');
    return reapRuns(this.options.workDir, force, async (removable) => (docker ? cleanK3sLeftovers(removable) : []));
  }
}
