// kind: a Kubernetes-in-Docker cluster per scenario lab, the scenario's CNI shape installed on it.
//   kind create cluster --name nr-<run>-cluster --config <generated> --kubeconfig <run dir>/kubeconfig
//   bridge:  CNI plugins + conflist per node (docker exec), routes between nodes
//   flannel: CNI plugins per node, kubectl apply <pinned manifest>
//   cilium:  helm install cilium --version <pinned>, then the hold affinity on kube-proxy's and Cilium's
//            DaemonSets (so a reboot can start them in order)
//   hosts:   containers on kind's network (docker-hosts.ts)
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TopologySpec } from '../../../model/scenario-schema.ts';
import { runCommand } from '../../../contract/command.ts';
import type { Availability, ClusterProvider, RunContext, StartedCluster } from '../../../contract/provider.ts';
import { configureBridge, installCniPlugins, waitPodCidrs } from '../bridge-cni.ts';
import { CliNodeTarget, dockerNode } from '../cli-node-target.ts';
import { ciliumSettings, installCilium, installFlannel, waitNodesReady } from '../cni-install.ts';
import { detectTools, requireHelm, type ToolName } from '../cli-tools.ts';
import { assertOwnedName } from '../context-guard.ts';
import {
  clusterName,
  provisionRealCluster,
  type RealProviderDeps,
  type StandUpInput,
  type StoodUp,
} from '../provision-real-cluster.ts';
import type { RealClusterOptions, ResolvedRealOptions } from '../real-options.ts';
import { RealProvider } from '../real-provider.ts';
import { prepareRunDir } from '../run-dir.ts';
import { ContainerNodeCluster } from '../container-node-cluster.ts';
import { equipContainerNodes } from '../equip-container-nodes.ts';
import { KIND_NETWORK, kindConfig, kindNodeNames } from './kind-config.ts';

export class KindProvider extends RealProvider<'kind'> implements ClusterProvider {
  constructor(
    options: RealClusterOptions | ResolvedRealOptions = {},
    private readonly deps: RealProviderDeps = {},
  ) {
    super('kind', options);
  }

  detect(): Promise<Availability> {
    const tools: ToolName[] = [
      'docker',
      'kind',
      'kubectl',
      ...(this.options.cni === 'cilium' ? (['helm'] as const) : []),
    ];
    return detectTools('kind', tools);
  }

  provision(topology: TopologySpec, run: RunContext): Promise<StartedCluster> {
    return provisionRealCluster(
      {
        name: 'kind',
        options: this.options,
        contextName: (r) => `kind-${clusterName(r)}`,
        standUp: (input) => this.standUp(input),
        kubeApi: this.deps.kubeApi,
        makeCluster: (nodeNames, run) => new ContainerNodeCluster(nodeNames, run),
      },
      topology,
      run,
    );
  }

  private async standUp(input: StandUpInput): Promise<StoodUp> {
    const { topology, cni, run, cluster, cli, api } = input;
    const name = clusterName(run);
    const dir = await prepareRunDir(this.options.workDir, run, cluster);
    const kubeconfig = join(dir, 'kubeconfig');
    const configFile = join(dir, 'kind-config.yaml');
    const settings = ciliumSettings(topology);
    if (cni === 'cilium') await requireHelm('kind');
    await writeFile(
      configFile,
      kindConfig({
        name,
        nodeCount: topology.nodes.length,
        image: this.options.kindNodeImage,
        podSubnet: topology.clusterCIDR,
        kubeProxyMode: cni === 'cilium' && settings.kubeProxyReplacement ? 'none' : 'iptables',
      }),
    );
    // registered before the create: a half-created cluster is deleted too
    cluster.onDestroy(`kind cluster ${name}`, () =>
      runCommand(['kind', 'delete', 'cluster', '--name', name, '--kubeconfig', kubeconfig], { timeoutMs: 180_000 }),
    );
    run.log(`kind create cluster ${name} (${topology.nodes.length} nodes, ${this.options.kindNodeImage}, cni ${cni})`);
    await runCommand(
      ['kind', 'create', 'cluster', '--name', name, '--config', configFile, '--kubeconfig', kubeconfig],
      { timeoutMs: 600_000, signal: run.signal },
    );

    const access = { kubeconfig, context: `kind-${name}` };
    const kubectl = cli(access);
    const containers = kindNodeNames(name, topology.nodes.length);
    const nodeTarget = (container: string) => {
      assertOwnedName(container, run.prefix, 'node container');
      return (ref: string) => new CliNodeTarget(ref, dockerNode(container, this.options.probeImage, run.runId));
    };
    if (cni === 'bridge' || cni === 'flannel') {
      for (const c of containers) await installCniPlugins(nodeTarget(c)(`node/${c}`), this.options.cniPlugins, run.log);
    }
    if (cni === 'bridge') {
      const nodes = await waitPodCidrs(api(access), run.signal, this.deps.podCidrWait);
      for (const node of nodes) await configureBridge(nodeTarget(node.name)(`node/${node.name}`), node, nodes);
    } else if (cni === 'flannel') {
      await installFlannel(kubectl, this.options.flannelManifest);
    } else {
      await installCilium(kubectl, this.options.ciliumChartVersion, settings, {
        host: containers[0]!,
        port: 6443,
        besideKubeProxy: true,
      });
    }
    await waitNodesReady(kubectl);
    await equipContainerNodes({
      topology,
      cni,
      run,
      cluster: cluster as ContainerNodeCluster,
      kubectl,
      api: api(access),
      network: KIND_NETWORK,
      options: this.options,
      nodes: topology.nodes.map((n, i) => ({
        target: nodeTarget(containers[i]!)(`node/${n.name}`),
        k8sName: containers[i]!,
      })),
      restartNode: async (container) => {
        assertOwnedName(container, run.prefix, 'node container');
        await runCommand(['docker', 'restart', container], { timeoutMs: 180_000, signal: run.signal });
      },
      ...(this.deps.readyTimeoutMs ? { readyTimeoutMs: this.deps.readyTimeoutMs } : {}),
    });
    return { access, nodes: containers.map((c) => ({ name: c, target: nodeTarget(c) })) };
  }
}
