// Creating a minikube (docker driver) profile, one per scenario lab, and installing the scenario's CNI:
//   KUBECONFIG=<run dir>/kubeconfig minikube start -p nr-<run>-cluster --driver=docker --nodes N
//     bridge, flannel: --cni=<bridge|flannel> (minikube installs it)
//     cilium: --cni=false --container-runtime=containerd, then helm install cilium (the pinned chart, as on kind)
// Nodes are reached with `minikube ssh -p P --node <node>`. The profile's deletion is registered on the cluster
// before the start, so a half-started profile is deleted too.
import { join } from 'node:path';
import type { TopologySpec } from '../../../../model/scenario-schema.ts';
import { runCommand } from '../../../../contract/command.ts';
import type { RunContext } from '../../../../contract/provider.ts';
import { ciliumSettings } from '../../common/cilium-settings.ts';
import { assertOwnedName } from '../../common/context-guard.ts';
import type { KubeApi } from '../../common/kube-api.ts';
import type { KubeAccess, KubeCli } from '../../common/kube-cli.ts';
import { clusterName, type ClusterNodeHandle } from '../../common/provision-steps.ts';
import type { RealCluster } from '../../common/real-cluster.ts';
import type { RealCni, ResolvedRealOptions } from '../../common/real-options.ts';
import { prepareRunDir } from '../../common/run-dir.ts';
import { CliNodeTarget, minikubeNode } from '../cli-node-target.ts';
import { requireHelm } from '../cli-tools.ts';
import { installCilium } from '../cni-install.ts';
import { MINIKUBE_API_PORT, minikubeCniArgs, minikubeNodeNames } from './minikube-config.ts';

export interface MinikubeCreateInput {
  topology: TopologySpec;
  cni: RealCni;
  run: RunContext;
  cluster: RealCluster;
  options: ResolvedRealOptions;
}

export interface CreatedMinikube {
  profile: string;
  access: KubeAccess;
  /** In scenario node order: the profile's nodes (their containers' names too). */
  nodes: ClusterNodeHandle[];
}

export async function createMinikubeCluster({
  topology,
  cni,
  run,
  cluster,
  options,
}: MinikubeCreateInput): Promise<CreatedMinikube> {
  const profile = clusterName(run);
  assertOwnedName(profile, run.prefix, 'minikube profile');
  if (cni === 'cilium') await requireHelm('minikube');
  const dir = await prepareRunDir(options.workDir, run, cluster);
  const kubeconfig = join(dir, 'kubeconfig');
  // minikube writes its context into $KUBECONFIG: the run's own file, never ~/.kube/config
  const env = { KUBECONFIG: kubeconfig };
  cluster.onDestroy(`minikube profile ${profile}`, () =>
    runCommand(['minikube', 'delete', '-p', profile], { env, timeoutMs: 300_000 }),
  );
  run.log(`minikube start -p ${profile} (${topology.nodes.length} nodes, ${options.k8sVersion}, cni ${cni})`);
  await runCommand(
    [
      'minikube',
      'start',
      '-p',
      profile,
      '--driver=docker',
      `--nodes=${topology.nodes.length}`,
      ...minikubeCniArgs(cni),
      `--kubernetes-version=${options.k8sVersion}`,
      `--extra-config=kubeadm.pod-network-cidr=${topology.clusterCIDR}`,
      // without a CNI yet the nodes are not Ready: minikube waits for its API server alone, netrepro for the rest
      `--wait=${cni === 'cilium' ? 'apiserver' : 'all'}`,
    ],
    { env, timeoutMs: 900_000, signal: run.signal },
  );
  const nodes = minikubeNodeNames(profile, topology.nodes.length).map((node) => ({
    name: node,
    target: (ref: string) => new CliNodeTarget(ref, minikubeNode(profile, node, options.probeImage, run.runId)),
  }));
  return { profile, access: { kubeconfig, context: profile }, nodes };
}

export interface MinikubeCniInput {
  topology: TopologySpec;
  cni: RealCni;
  kubectl: KubeCli;
  api: KubeApi;
  options: ResolvedRealOptions;
}

/** bridge and flannel are minikube's own, installed by its start; cilium is the pinned chart, given the API server. */
export async function installMinikubeCni({ topology, cni, kubectl, api, options }: MinikubeCniInput): Promise<void> {
  if (cni !== 'cilium') return;
  const [controlPlane] = await api.listNodes();
  await installCilium(
    kubectl,
    options.ciliumChartVersion,
    ciliumSettings(topology),
    controlPlane && { host: controlPlane.internalIP, port: MINIKUBE_API_PORT, besideKubeProxy: true },
  );
}
