// Creating the k3s cluster, one container on docker's default network (one node only), and installing its CNI:
//   flannel: k3s's own, with its own kube-proxy, both inside the k3s process
//   cilium:  `--flannel-backend=none --disable-network-policy --disable-kube-proxy`; beside kube-proxy, upstream
//            kube-proxy deployed as kubeadm's DaemonSet (k3s-kube-proxy.ts), then helm install cilium
// The container is started behind a function so tests replace testcontainers (which needs a container engine)
// with a recorder; testcontainers is loaded only when k3s really runs.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TopologySpec } from '../../../../model/scenario-schema.ts';
import type { RunContext } from '../../../../contract/provider.ts';
import { ciliumSettings } from '../../common/cilium-settings.ts';
import { assertOwnedName } from '../../common/context-guard.ts';
import type { ClusterNode } from '../../common/kube-api.ts';
import type { KubeAccess, KubeCli } from '../../common/kube-cli.ts';
import { importOptional } from '../../common/optional-module.ts';
import { clusterName } from '../../common/provision-steps.ts';
import type { RealCluster } from '../../common/real-cluster.ts';
import type { RealCni, ResolvedRealOptions } from '../../common/real-options.ts';
import { prepareRunDir } from '../../common/run-dir.ts';
import { requireHelm } from '../cli-tools.ts';
import { installCilium } from '../cni-install.ts';
import { K3S_NETWORK, k3sServerArgs, renameContext } from './k3s-config.ts';
import { deployKubeProxy, K3S_LOCAL_API, upstreamRelease } from './k3s-kube-proxy.ts';

export interface K3sStartInput {
  image: string;
  /** Container name: the run prefix first, so `clean` finds it. */
  name: string;
  labels: Record<string, string>;
  /** k3s server arguments. */
  command: string[];
  /** The docker network it joins (hosts outside the cluster join it too). */
  network: string;
}

export interface StartedK3s {
  /** Name `docker exec` reaches the node by. */
  name: string;
  /** kubeconfig with the host-mapped API server address. */
  kubeconfig: string;
  stop(): Promise<void>;
}

export type StartK3s = (input: K3sStartInput) => Promise<StartedK3s>;

export const startK3sWithTestcontainers: StartK3s = async (input) => {
  const { K3sContainer } = await importOptional('the k3s provider', () => import('@testcontainers/k3s'));
  const started = await new K3sContainer(input.image)
    .withName(input.name)
    .withLabels(input.labels)
    .withCommand(input.command)
    .withNetworkMode(input.network)
    .start();
  return { name: input.name, kubeconfig: started.getKubeConfig(), stop: async () => void (await started.stop()) };
};

export interface K3sCreateInput {
  topology: TopologySpec;
  cni: RealCni;
  run: RunContext;
  cluster: RealCluster;
  options: ResolvedRealOptions;
  start: StartK3s;
}

export interface CreatedK3s {
  /** The container's name, which the run's context is named after too. */
  name: string;
  dir: string;
  access: KubeAccess;
}

/** The container started, its stop registered on the cluster, and the run's kubeconfig written with our context name. */
export async function createK3sCluster({
  topology,
  cni,
  run,
  cluster,
  options,
  start,
}: K3sCreateInput): Promise<CreatedK3s> {
  const name = clusterName(run);
  assertOwnedName(name, run.prefix, 'k3s container');
  if (cni === 'cilium') await requireHelm('k3s');
  const dir = await prepareRunDir(options.workDir, run, cluster);
  run.log(`k3s container ${name} (${options.k3sImage}, cni ${cni})`);
  const k3s = await start({
    image: options.k3sImage,
    name,
    labels: { 'netrepro.io/run': run.runId },
    command: k3sServerArgs(topology, cni),
    network: K3S_NETWORK,
  });
  cluster.onDestroy(`k3s container ${name}`, () => k3s.stop());
  const access = { kubeconfig: join(dir, 'kubeconfig'), context: name };
  await writeFile(access.kubeconfig, renameContext(k3s.kubeconfig, name));
  return { name, dir, access };
}

export interface K3sCniInput {
  topology: TopologySpec;
  cni: RealCni;
  kubectl: KubeCli;
  /** The k3s node as the API lists it. */
  node: ClusterNode | undefined;
  dir: string;
  options: ResolvedRealOptions;
}

/** flannel is k3s's own; cilium gets upstream kube-proxy beside it (unless it replaces it), then the pinned chart. */
export async function installK3sCni({ topology, cni, kubectl, node, dir, options }: K3sCniInput): Promise<void> {
  const settings = ciliumSettings(topology);
  if (cni === 'cilium' && !settings.kubeProxyReplacement)
    await deployKubeProxy(kubectl, dir, {
      release: upstreamRelease(node?.kubeletVersion ?? options.k8sVersion),
      clusterCIDR: topology.clusterCIDR,
      server: `https://${K3S_LOCAL_API.host}:${K3S_LOCAL_API.port}`,
    });
  // the agent reaches the API server without kube-proxy's rules, as after a reboot that starts it first
  if (cni === 'cilium')
    await installCilium(kubectl, options.ciliumChartVersion, settings, { ...K3S_LOCAL_API, besideKubeProxy: true });
}
