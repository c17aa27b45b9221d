// Creating a kind cluster and installing the scenario's CNI shape on it:
//   kind create cluster --name nr-<run>-cluster --config <generated> --kubeconfig <run dir>/kubeconfig
//   bridge:  CNI plugins + conflist per node (docker exec), routes between nodes
//   flannel: CNI plugins per node, kubectl apply <pinned manifest>
//   cilium:  helm install cilium --version <pinned>
// Its deletion is registered on the cluster before the create, so a half-created cluster is deleted too.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TopologySpec } from '../../../../model/scenario-schema.ts';
import { runCommand } from '../../../../contract/command.ts';
import type { RunContext } from '../../../../contract/provider.ts';
import { ciliumSettings } from '../../common/cilium-settings.ts';
import { assertOwnedName } from '../../common/context-guard.ts';
import type { KubeApi } from '../../common/kube-api.ts';
import type { KubeAccess, KubeCli } from '../../common/kube-cli.ts';
import { clusterName, type ClusterNodeHandle, type Polling } from '../../common/provision-steps.ts';
import type { RealCluster } from '../../common/real-cluster.ts';
import type { RealCni, ResolvedRealOptions } from '../../common/real-options.ts';
import { prepareRunDir } from '../../common/run-dir.ts';
import { configureBridge, installCniPlugins, waitPodCidrs } from '../bridge-cni.ts';
import { CliNodeTarget, dockerNode } from '../cli-node-target.ts';
import { requireHelm } from '../cli-tools.ts';
import { installCilium, installFlannel } from '../cni-install.ts';
import { kindConfig, kindContext, kindNodeNames } from './kind-config.ts';
import type { KindRuntime } from './kind-engine.ts';

export interface KindCreateInput {
  topology: TopologySpec;
  cni: RealCni;
  run: RunContext;
  cluster: RealCluster;
  options: ResolvedRealOptions;
  /** The engine, kind, node image and API access the cluster runs with (kind-engine.ts). */
  runtime: KindRuntime;
}

export interface CreatedKind {
  access: KubeAccess;
  /** In scenario node order: the node containers (their Kubernetes node names too). */
  nodes: ClusterNodeHandle[];
}

export async function createKindCluster({
  topology,
  cni,
  run,
  cluster,
  options,
  runtime,
}: KindCreateInput): Promise<CreatedKind> {
  const name = clusterName(run);
  const dir = await prepareRunDir(options.workDir, run, cluster);
  const kubeconfig = join(dir, 'kubeconfig');
  const configFile = join(dir, 'kind-config.yaml');
  if (cni === 'cilium') await requireHelm('kind');
  await writeFile(
    configFile,
    kindConfig({
      name,
      nodeCount: topology.nodes.length,
      image: runtime.nodeImage,
      podSubnet: topology.clusterCIDR,
      kubeProxyMode: cni === 'cilium' && ciliumSettings(topology).kubeProxyReplacement ? 'none' : 'iptables',
    }),
  );
  // kind runs where the engine publishes the API server's port, and finds the engine's docker on its PATH
  const kind = [...runtime.engine.enter, runtime.kind];
  const env = { ...runtime.engine.env };
  cluster.onDestroy(`kind cluster ${name}`, () =>
    runCommand([...kind, 'delete', 'cluster', '--name', name, '--kubeconfig', kubeconfig], { timeoutMs: 180_000, env }),
  );
  run.log(`kind create cluster ${name} (${topology.nodes.length} nodes, ${runtime.nodeImage}, cni ${cni})`);
  const started = Date.now();
  await runCommand([...kind, 'create', 'cluster', '--name', name, '--config', configFile, '--kubeconfig', kubeconfig], {
    timeoutMs: 600_000,
    signal: run.signal,
    env,
  });
  run.log(`kind create cluster ${name}: ${Date.now() - started} ms`);
  const nodes = kindNodeNames(name, topology.nodes.length).map((c) => kindNode(c, runtime, run));
  return { access: await runtime.access(kubeconfig, kindContext(name)), nodes };
}

/** A node container of the run's cluster, reached by `docker exec` on its engine. */
function kindNode(container: string, runtime: KindRuntime, run: RunContext): ClusterNodeHandle {
  assertOwnedName(container, run.prefix, 'node container');
  const wrap = dockerNode(container, runtime.probeImage, run.runId, undefined, runtime.engine.docker);
  return { name: container, target: (ref) => new CliNodeTarget(ref, wrap) };
}

export interface KindCniInput {
  topology: TopologySpec;
  cni: RealCni;
  kubectl: KubeCli;
  api: KubeApi;
  nodes: readonly ClusterNodeHandle[];
  options: ResolvedRealOptions;
  runtime: KindRuntime;
  run: RunContext;
  /** How long and how often the Nodes are polled for their podCIDRs (tests make it short). */
  podCidrPolling?: Polling;
}

export async function installKindCni({
  topology,
  cni,
  kubectl,
  api,
  nodes,
  options,
  runtime,
  run,
  podCidrPolling,
}: KindCniInput): Promise<void> {
  if (cni === 'bridge' || cni === 'flannel') {
    for (const n of nodes) await installCniPlugins(n.target(`node/${n.name}`), options.cniPlugins, run.log);
  }
  if (cni === 'bridge') {
    const listed = await waitPodCidrs(api, run.signal, podCidrPolling);
    for (const node of listed)
      await configureBridge(kindNode(node.name, runtime, run).target(`node/${node.name}`), node, listed);
  } else if (cni === 'flannel') {
    await installFlannel(kubectl, options.flannelManifest);
  } else {
    await installCilium(kubectl, options.ciliumChartVersion, ciliumSettings(topology), {
      host: nodes[0]!.name,
      port: 6443,
      besideKubeProxy: true,
    });
  }
}

/** The bridge shape on one node again: its conflist and its routes to the other nodes' podCIDRs. */
export async function restoreKindBridge(
  container: string,
  { api, runtime, run }: { api: KubeApi; runtime: KindRuntime; run: RunContext },
): Promise<void> {
  const listed = await api.listNodes();
  const self = listed.find((n) => n.name === container);
  if (self) await configureBridge(kindNode(container, runtime, run).target(`node/${container}`), self, listed);
}
