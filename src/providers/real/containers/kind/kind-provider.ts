// kind: a Kubernetes-in-Docker cluster per scenario lab, the scenario's CNI shape installed on it (kind-create.ts),
// then what container nodes get (equip-container-nodes.ts): on cilium the hold affinity on kube-proxy's and
// Cilium's DaemonSets (so a reboot can start them in order), the hosts as containers on kind's network.
import type { TopologySpec } from '../../../../model/scenario-schema.ts';
import type {
  Availability,
  ClusterProvider,
  Misfit,
  RunContext,
  StartedCluster,
} from '../../../../contract/provider.ts';
import { agentCommandOf } from '../../common/workload-objects.ts';
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
import { waitNodesReady, waitSystemDeployments } from '../cni-install.ts';
import { ContainerNodeCluster } from '../container-node-cluster.ts';
import { ContainerProvider } from '../container-provider.ts';
import { equipContainerNodes } from '../equip-container-nodes.ts';
import { reapRuns } from '../reap-leftovers.ts';
import { cleanKindLeftovers } from './clean-kind-leftovers.ts';
import { KIND_NETWORK, KIND_SERVICE_SUBNET, kindContext } from './kind-config.ts';
import { createKindCluster, installKindCni, restoreKindBridge } from './kind-create.ts';
import { restartKindNode } from './kind-reboot.ts';
import { KIND_BUILD_HINT } from './kind-build.ts';
import { type KindMode, kindMode, kindRuntime, privateImages, privateMisfit } from './kind-engine.ts';

export class KindProvider extends ContainerProvider<'kind'> implements ClusterProvider {
  private readonly mode: KindMode;

  constructor(
    options: RealClusterOptions | ResolvedRealOptions = {},
    private readonly deps: RealProviderDeps = {},
  ) {
    super('kind', options, ['docker', 'kind', 'kubectl']);
    this.mode = kindMode(this.options);
  }

  override async detect(): Promise<Availability> {
    if (this.mode.engine === 'host') {
      const host = await super.detect();
      // a host without Docker can still run kind, on an engine of each cluster's own
      return host.ok ? host : { ...host, hint: `${host.hint}; or, without Docker: ${KIND_BUILD_HINT}` };
    }
    if (!this.mode.build)
      return { ok: false, reason: 'kind: no Docker on this host and no kind build', hint: KIND_BUILD_HINT };
    if (process.getuid?.() !== 0)
      return {
        ok: false,
        reason: 'kind on a Docker engine of its own needs root (it runs in network and mount namespaces of the run)',
        hint: 'run as root, or point DOCKER_HOST at a Docker engine',
      };
    return { ok: true };
  }

  override fit(topology: TopologySpec): Misfit | undefined {
    const own = this.mode.engine === 'private' && this.mode.build;
    return (own && privateMisfit(own, topology, this.options)) || super.fit(topology);
  }

  async provision(topology: TopologySpec, run: RunContext): Promise<StartedCluster> {
    assertFits('kind', this.fit(topology));
    const cni = clusterCni(topology, this.options);
    const kube = guardedKube(kindContext(clusterName(run)), this.options, await defaultKubeApi(this.deps));
    const images = this.mode.engine === 'private' && this.mode.build ? privateImages(this.mode.build) : undefined;
    const cluster = new ContainerNodeCluster(scenarioNodeNames(topology), run, images && agentCommandOf(images));
    cluster.serviceCIDR = KIND_SERVICE_SUBNET;
    try {
      const runtime = await kindRuntime(this.mode, this.options, run, cluster);
      const { access, nodes } = await createKindCluster({
        topology,
        cni,
        run,
        cluster,
        options: this.options,
        runtime,
      });
      const kubectl = kube.cli(access);
      const api = kube.api(access);
      await installKindCni({
        topology,
        cni,
        kubectl,
        api,
        nodes,
        options: this.options,
        runtime,
        run,
        ...(this.deps.podCidrWait ? { podCidrPolling: this.deps.podCidrWait } : {}),
      });
      await waitNodesReady(kubectl);
      await waitSystemDeployments(kubectl);
      await equipContainerNodes({
        topology,
        cni,
        run,
        cluster,
        kubectl,
        api,
        network: KIND_NETWORK,
        options: { ...this.options, ...runtime.images },
        docker: runtime.engine.docker,
        nodes,
        restartNode: restartKindNode(
          run,
          runtime.engine.docker,
          cni === 'bridge' ? (c) => restoreKindBridge(c, { api, runtime, run }) : undefined,
        ),
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
        images: runtime.images ?? this.options,
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

  reap({ force }: { force: boolean }): Promise<string[]> {
    const { workDir } = this.options;
    return reapRuns(workDir, force, (removable) => cleanKindLeftovers(removable, workDir));
  }
}
