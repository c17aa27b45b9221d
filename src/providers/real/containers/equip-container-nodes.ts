// What a cluster whose nodes are docker containers (kind, minikube's docker driver, k3s's container) gets once
// its CNI is up: the hold affinity on the component DaemonSets a reboot may hold off (only on the cilium shape
// beside kube-proxy, whose scenarios reboot), the topology's hosts as containers on the cluster's docker
// network, its node components, started by hand or brought up in order after a node's container restarts, and
// on the cilium shape each node's BPF SNAT table, read through its agent. A cluster whose components run inside
// one process (k3s with its own kube-proxy and flannel) gets the hosts alone (addDockerHosts).
import type { TopologySpec } from '../../../model/scenario-schema.ts';
import type { RunContext } from '../../../contract/provider.ts';
import { ciliumSnatTable } from './cilium-snat-table.ts';
import { clusterComponents } from './cluster-components.ts';
import { makeHoldable } from './component-daemonsets.ts';
import type { ContainerNodeCluster } from './container-node-cluster.ts';
import { startDockerHosts } from './docker-hosts.ts';
import type { KubeApi } from '../common/kube-api.ts';
import type { KubeCli } from '../common/kube-cli.ts';
import { NodeComponents } from './node-components.ts';
import type { ClusterNodeHandle } from '../common/provision-steps.ts';
import type { RealCni, ResolvedRealOptions } from '../common/real-options.ts';
import { workloadBack } from './workload-back.ts';

export interface ContainerNodesInput {
  topology: TopologySpec;
  cni: RealCni;
  run: RunContext;
  cluster: ContainerNodeCluster;
  kubectl: KubeCli;
  api: KubeApi;
  /** The docker network the node containers are on: the hosts join it. */
  network: string;
  options: Pick<ResolvedRealOptions, 'agentImage' | 'probeImage' | 'k8sVersion'> & { agentCommand?: readonly string[] };
  /** The engine the node containers run on (default: the host's). */
  docker?: readonly string[];
  /** In scenario node order: the Kubernetes node name (its container's name too) and how to exec on it. */
  nodes: readonly ClusterNodeHandle[];
  /** Restarts the node's container; the provider adds what its nodes need to come back (minikube: its kubelet). */
  restartNode(k8sName: string): Promise<void>;
  /** How long a component may take to be Ready (default: node-components.ts's). */
  readyTimeoutMs?: number;
}

export async function equipContainerNodes(input: ContainerNodesInput): Promise<void> {
  const { topology, cni, run, cluster, kubectl, api, options } = input;
  const components = clusterComponents(topology, cni);
  const holdable = cni === 'cilium' && components.length > 1 ? components : [];
  await makeHoldable(kubectl, holdable);
  await addDockerHosts(input);
  const nodes = topology.nodes.map((n, i) => {
    const node = input.nodes[i]!;
    return { target: node.target(`node/${n.name}`), k8sName: node.name };
  });
  const k8sNames = new Map(topology.nodes.map((n, i) => [n.name, nodes[i]!.k8sName]));
  if (cni === 'cilium') cluster.snatTables = (node) => ciliumSnatTable(kubectl, k8sNames.get(node) ?? node, run.signal);
  const k8sVersion = (await api.listNodes())[0]?.kubeletVersion ?? options.k8sVersion;
  cluster.components = new NodeComponents({
    kubectl,
    nodes: new Map(topology.nodes.map((n, i) => [n.name, nodes[i]!])),
    k8sVersion,
    kubeProxyProfile: topology.kubeProxy,
    services: topology.services.length > 0,
    startOrder: components,
    holdable: new Set(holdable),
    restartNode: input.restartNode,
    bootSysctls: new Map(topology.nodes.map((n) => [n.name, n.sysctls ?? {}])),
    workloadSelector: `netrepro.io/run=${run.runId}`,
    onWorkloadBack: (pods) => workloadBack({ pods, topology, cluster, api }),
    signal: run.signal,
    log: run.log,
    ...(input.readyTimeoutMs ? { readyTimeoutMs: input.readyTimeoutMs } : {}),
  });
}

/** The topology's hosts as containers on the cluster's docker network, reachable as `host/NAME`. */
export async function addDockerHosts({
  topology,
  run,
  cluster,
  network,
  options,
  docker,
}: Pick<ContainerNodesInput, 'topology' | 'run' | 'cluster' | 'network' | 'options' | 'docker'>): Promise<void> {
  const hosts = await startDockerHosts({ topology, run, cluster, network, ...options, ...(docker ? { docker } : {}) });
  for (const host of hosts) {
    cluster.hosts.set(host.name, host.target);
    cluster.addresses.set(`host/${host.name}`, host.ip);
  }
}
