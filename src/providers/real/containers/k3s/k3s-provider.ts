// k3s in one container (testcontainers' K3sContainer) on docker's default network, one node only:
//   flannel: k3s's own, with its own kube-proxy, both inside the k3s process; hosts outside the cluster as
//            containers on the same network (docker-hosts.ts)
//   cilium:  `--flannel-backend=none --disable-network-policy --disable-kube-proxy`; beside kube-proxy, upstream
//            kube-proxy deployed as kubeadm's DaemonSet (k3s-kube-proxy.ts), then helm install cilium, then
//            the hold affinity on both DaemonSets, the hosts, and components started by hand or in order after
//            the node's container restarts (equip-container-nodes.ts, k3s-reboot.ts)
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import type { TopologySpec } from '../../../../model/scenario-schema.ts';
import type { Availability, ClusterProvider, RunContext, StartedCluster } from '../../../../contract/provider.ts';
import { CliNodeTarget, dockerNode, K3S_FROM_PROBE_IMAGE } from '../cli-node-target.ts';
import { detectTools, requireHelm, type ToolName } from '../cli-tools.ts';
import { ciliumSettings } from '../../common/cilium-settings.ts';
import { installCilium, waitNodesReady } from '../cni-install.ts';
import { ContainerNodeCluster } from '../container-node-cluster.ts';
import { assertOwnedName } from '../../common/context-guard.ts';
import { addDockerHosts, equipContainerNodes } from '../equip-container-nodes.ts';
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
import { startK3sWithTestcontainers, type StartK3s } from './k3s-create.ts';
import { deployKubeProxy, K3S_LOCAL_API, upstreamRelease } from './k3s-kube-proxy.ts';
import { restartK3sNode } from './k3s-reboot.ts';

/** The docker network testcontainers puts the k3s container on, named so the hosts can join it. */
export const K3S_NETWORK = 'bridge';

/**
 * k3s's own kube-proxy runs inside its process, which Cilium beside kube-proxy cannot have (no pod to hold off
 * a rebooting node), and Cilium's kube-proxy replacement needs none: with Cilium it is always off.
 */
export function k3sServerArgs(topology: TopologySpec, cni: RealCni): string[] {
  return [
    'server',
    '--disable=traefik',
    `--cluster-cidr=${topology.clusterCIDR}`,
    ...(cni === 'cilium' ? ['--flannel-backend=none', '--disable-network-policy', '--disable-kube-proxy'] : []),
  ];
}

/** k3s names its context `default`; ours carries the run prefix so the context guard can tell it apart. */
export function renameContext(kubeconfig: string, context: string): string {
  const doc = parse(kubeconfig) as { contexts: { name: string }[]; 'current-context': string };
  for (const c of doc.contexts) if (c.name === doc['current-context']) c.name = context;
  doc['current-context'] = context;
  return stringify(doc);
}

export class K3sProvider extends RealProvider<'k3s'> implements ClusterProvider {
  constructor(
    options: RealClusterOptions | ResolvedRealOptions = {},
    private readonly deps: RealProviderDeps & { startK3s?: StartK3s } = {},
  ) {
    super('k3s', options);
  }

  detect(): Promise<Availability> {
    const tools: ToolName[] = ['docker', 'kubectl', ...(this.options.cni === 'cilium' ? (['helm'] as const) : [])];
    return detectTools('k3s', tools);
  }

  async provision(topology: TopologySpec, run: RunContext): Promise<StartedCluster> {
    const load = this.deps.kubeApi ?? (await import('../../common/client-kube-api.ts')).clientKubeApi;
    return provisionRealCluster(
      {
        name: 'k3s',
        options: this.options,
        contextName: clusterName,
        standUp: (i) => this.standUp(i),
        // a restart publishes the API server on another host port, written into the kubeconfig (k3s-reboot.ts)
        kubeApi: (access) => kubeconfigFollowingApi(access, load),
        makeCluster: (nodeNames, run) => new ContainerNodeCluster(nodeNames, run),
      },
      topology,
      run,
    );
  }

  private async standUp({ topology, cni, run, cluster, cli, api }: StandUpInput): Promise<StoodUp> {
    const name = clusterName(run);
    assertOwnedName(name, run.prefix, 'k3s container');
    if (cni === 'cilium') await requireHelm('k3s');
    const dir = await prepareRunDir(this.options.workDir, run, cluster);
    run.log(`k3s container ${name} (${this.options.k3sImage}, cni ${cni})`);
    const start = this.deps.startK3s ?? startK3sWithTestcontainers;
    const k3s = await start({
      image: this.options.k3sImage,
      name,
      labels: { 'netrepro.io/run': run.runId },
      command: k3sServerArgs(topology, cni),
      network: K3S_NETWORK,
    });
    cluster.onDestroy(`k3s container ${name}`, () => k3s.stop());
    const access = { kubeconfig: join(dir, 'kubeconfig'), context: name };
    await writeFile(access.kubeconfig, renameContext(k3s.kubeconfig, name));
    const kubectl = cli(access);
    const [node] = await api(access).listNodes();
    const settings = ciliumSettings(topology);
    if (cni === 'cilium' && !settings.kubeProxyReplacement)
      await deployKubeProxy(kubectl, dir, {
        release: upstreamRelease(node?.kubeletVersion ?? this.options.k8sVersion),
        clusterCIDR: topology.clusterCIDR,
        server: `https://${K3S_LOCAL_API.host}:${K3S_LOCAL_API.port}`,
      });
    // the agent reaches the API server without kube-proxy's rules, as after a reboot that starts it first
    if (cni === 'cilium')
      await installCilium(kubectl, this.options.ciliumChartVersion, settings, {
        ...K3S_LOCAL_API,
        besideKubeProxy: true,
      });
    await waitNodesReady(kubectl);
    const k8sName = node?.name ?? name;
    const target = (ref: string) =>
      new CliNodeTarget(ref, dockerNode(name, this.options.probeImage, run.runId, K3S_FROM_PROBE_IMAGE));
    const equip = {
      topology,
      run,
      cluster: cluster as ContainerNodeCluster,
      network: K3S_NETWORK,
      options: this.options,
    };
    if (cni === 'cilium')
      await equipContainerNodes({
        ...equip,
        cni,
        kubectl,
        api: api(access),
        nodes: [{ target: target(`node/${topology.nodes[0]!.name}`), k8sName }],
        restartNode: restartK3sNode({ container: name, kubeconfig: access.kubeconfig, run }),
        ...(this.deps.readyTimeoutMs ? { readyTimeoutMs: this.deps.readyTimeoutMs } : {}),
      });
    else await addDockerHosts(equip);
    return { access, nodes: [{ name: k8sName, target }] };
  }
}
