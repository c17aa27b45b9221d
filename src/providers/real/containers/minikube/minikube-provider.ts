// minikube (docker driver): one profile per scenario lab.
//   KUBECONFIG=<run dir>/kubeconfig minikube start -p nr-<run>-cluster --driver=docker --nodes N
//     bridge, flannel: --cni=<bridge|flannel> (minikube installs it)
//     cilium: --cni=false --container-runtime=containerd, then helm install cilium (the pinned chart, as on kind)
//   then the hold affinity on kube-proxy's and Cilium's DaemonSets (cilium), and hosts as containers on the
//   profile's docker network (equip-container-nodes.ts)
// Nodes are reached with `minikube ssh -p P --node <node>`; node names (and their containers) are P, P-m02...
import { join } from 'node:path';
import type { TopologySpec } from '../../../../model/scenario-schema.ts';
import { runCommand } from '../../../../contract/command.ts';
import type { Availability, ClusterProvider, RunContext, StartedCluster } from '../../../../contract/provider.ts';
import { CliNodeTarget, minikubeNode } from '../cli-node-target.ts';
import { detectTools, requireHelm, type ToolName } from '../cli-tools.ts';
import { ciliumSettings } from '../../common/cilium-settings.ts';
import { installCilium, waitNodesReady } from '../cni-install.ts';
import { ContainerNodeCluster } from '../container-node-cluster.ts';
import { assertOwnedName } from '../../common/context-guard.ts';
import { equipContainerNodes } from '../equip-container-nodes.ts';
import { kubeconfigFollowingApi } from '../kubeconfig-following-api.ts';
import {
  clusterName,
  provisionRealCluster,
  type RealProviderDeps,
  type StandUpInput,
  type StoodUp,
} from '../../common/provision-steps.ts';
import type { RealClusterOptions, RealCni, ResolvedRealOptions } from '../../common/real-options.ts';
import { RealProvider } from '../container-provider.ts';
import { prepareRunDir } from '../../common/run-dir.ts';
import { restartMinikubeNode } from './minikube-reboot.ts';

/** The port minikube's API server listens on in the node container (`--apiserver-port`'s default). */
export const MINIKUBE_API_PORT = 8443;

export const minikubeNodeNames = (profile: string, count: number) =>
  Array.from({ length: count }, (_, i) => (i === 0 ? profile : `${profile}-m${String(i + 1).padStart(2, '0')}`));

/**
 * How the cluster gets its CNI. Cilium is not minikube's `--cni=cilium`: that applies minikube's own manifest,
 * which takes none of the scenario's values (BPF masquerade, socket LB) nor the API server address the agent
 * needs to come up before kube-proxy after a reboot. So minikube installs no CNI and helm installs the pinned
 * chart with kind's values. containerd, not minikube's default docker runtime, because it sets pods up only
 * through the CNI configuration Cilium writes, as on kind.
 */
export function minikubeCniArgs(cni: RealCni): string[] {
  return cni === 'cilium' ? ['--cni=false', '--container-runtime=containerd'] : [`--cni=${cni}`];
}

export class MinikubeProvider extends RealProvider<'minikube'> implements ClusterProvider {
  constructor(
    options: RealClusterOptions | ResolvedRealOptions = {},
    private readonly deps: RealProviderDeps = {},
  ) {
    super('minikube', options);
  }

  detect(): Promise<Availability> {
    const tools: ToolName[] = [
      'docker',
      'minikube',
      'kubectl',
      ...(this.options.cni === 'cilium' ? (['helm'] as const) : []),
    ];
    return detectTools('minikube', tools);
  }

  async provision(topology: TopologySpec, run: RunContext): Promise<StartedCluster> {
    const load = this.deps.kubeApi ?? (await import('../../common/client-kube-api.ts')).clientKubeApi;
    return provisionRealCluster(
      {
        name: 'minikube',
        options: this.options,
        contextName: clusterName,
        standUp: (i) => this.standUp(i),
        kubeApi: (access) => kubeconfigFollowingApi(access, load),
        makeCluster: (nodeNames, run) => new ContainerNodeCluster(nodeNames, run),
      },
      topology,
      run,
    );
  }

  private async standUp({ topology, cni, run, cluster, cli, api }: StandUpInput): Promise<StoodUp> {
    const profile = clusterName(run);
    assertOwnedName(profile, run.prefix, 'minikube profile');
    if (cni === 'cilium') await requireHelm('minikube');
    const dir = await prepareRunDir(this.options.workDir, run, cluster);
    const kubeconfig = join(dir, 'kubeconfig');
    // minikube writes its context into $KUBECONFIG: the run's own file, never ~/.kube/config
    const env = { KUBECONFIG: kubeconfig };
    cluster.onDestroy(`minikube profile ${profile}`, () =>
      runCommand(['minikube', 'delete', '-p', profile], { env, timeoutMs: 300_000 }),
    );
    run.log(`minikube start -p ${profile} (${topology.nodes.length} nodes, ${this.options.k8sVersion}, cni ${cni})`);
    await runCommand(
      [
        'minikube',
        'start',
        '-p',
        profile,
        '--driver=docker',
        `--nodes=${topology.nodes.length}`,
        ...minikubeCniArgs(cni),
        `--kubernetes-version=${this.options.k8sVersion}`,
        `--extra-config=kubeadm.pod-network-cidr=${topology.clusterCIDR}`,
        // without a CNI yet the nodes are not Ready: minikube waits for its API server alone, netrepro for the rest
        `--wait=${cni === 'cilium' ? 'apiserver' : 'all'}`,
      ],
      { env, timeoutMs: 900_000, signal: run.signal },
    );
    const access = { kubeconfig, context: profile };
    const kubectl = cli(access);
    if (cni === 'cilium') {
      const [controlPlane] = await api(access).listNodes();
      await installCilium(
        kubectl,
        this.options.ciliumChartVersion,
        ciliumSettings(topology),
        controlPlane && { host: controlPlane.internalIP, port: MINIKUBE_API_PORT, besideKubeProxy: true },
      );
    }
    await waitNodesReady(kubectl);
    const names = minikubeNodeNames(profile, topology.nodes.length);
    const nodeTarget = (node: string) => (ref: string) =>
      new CliNodeTarget(ref, minikubeNode(profile, node, this.options.probeImage, run.runId));
    await equipContainerNodes({
      topology,
      cni,
      run,
      cluster: cluster as ContainerNodeCluster,
      kubectl,
      api: api(access),
      // the docker driver puts a profile's node containers on a network of its own, named after it
      network: profile,
      options: this.options,
      nodes: topology.nodes.map((n, i) => ({ target: nodeTarget(names[i]!)(`node/${n.name}`), k8sName: names[i]! })),
      restartNode: restartMinikubeNode({ profile, kubeconfig, run }),
      ...(this.deps.readyTimeoutMs ? { readyTimeoutMs: this.deps.readyTimeoutMs } : {}),
    });
    return { access, nodes: names.map((node) => ({ name: node, target: nodeTarget(node) })) };
  }
}
