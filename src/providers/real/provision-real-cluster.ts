// The provisioning every real provider shares, as ordered actions with rollback:
//   fit checks -> stand up the cluster (provider) -> guard the context -> node sysctls -> workload
//   -> kube-proxy holding every endpoint on every node.
// On any failure the teardown recorded so far runs, then the error is re-thrown.
import type { TopologySpec } from '../../model/scenario-schema.ts';
import type { RunContext, StartedCluster, Target } from '../../contract/provider.ts';
import { assertContextAllowed } from './context-guard.ts';
import type { PodCidrWait } from './bridge-cni.ts';
import { deployWorkload, namespacePrefix } from './deploy-workload.ts';
import type { KubeApi } from './kube-api.ts';
import { KubeCli, type KubeAccess } from './kube-cli.ts';
import { RealCluster } from './real-cluster.ts';
import { ServiceChanges } from './service-changes.ts';
import type { RealCni, ResolvedRealOptions } from './real-options.ts';
import { fitCni, realMisfit } from './scenario-fit.ts';
import { UnsupportedScenarioError } from './unsupported.ts';
import type { RealProviderName } from './real-support.ts';
import type { WorkloadImages } from './workload-objects.ts';
import type { Misfit } from '../../contract/provider.ts';

/** Cluster, profile and container names: the run prefix first, so `clean` finds them. */
export const clusterName = (run: RunContext) => `${run.prefix}cluster`;

export interface RealProviderDeps {
  /** The Kubernetes API; tests inject a recorder instead of a server. */
  kubeApi?: (access: KubeAccess) => KubeApi;
  /** How long a node component may take to be Ready after a start or reboot (default 180 s; tests make it short). */
  readyTimeoutMs?: number;
  /** How long and how often the bridge shape polls for the nodes' podCIDRs (tests make it short). */
  podCidrWait?: PodCidrWait;
}

export interface StoodUp {
  access: KubeAccess;
  /** In scenario node order: the Kubernetes node name and how to exec on it. */
  nodes: { name: string; target: (ref: string) => Target }[];
}

export interface StandUpInput {
  topology: TopologySpec;
  cni: RealCni;
  run: RunContext;
  cluster: RealCluster;
  /** Builds the kubectl/helm runner once the provider knows its kubeconfig; guarded. */
  cli(access: KubeAccess): KubeCli;
  api(access: KubeAccess): KubeApi;
}

export interface RealProviderSpec {
  name: RealProviderName;
  options: ResolvedRealOptions;
  /** The context name the provider's cluster will have. */
  contextName(run: RunContext): string;
  /** Creates the cluster and installs the CNI; registers its own teardown on `input.cluster`. */
  standUp(input: StandUpInput): Promise<StoodUp>;
  /** Default: @kubernetes/client-node, loaded once a cluster is provisioned (a run that builds none never loads it). */
  kubeApi?: (access: KubeAccess) => KubeApi;
  /** What the pods run (default: the options' probe and agent images, the agent from a ConfigMap). */
  images?: WorkloadImages;
  /** The provider's own topology fit (default: realMisfit). */
  misfit?: (topology: TopologySpec) => Misfit | undefined;
  /** The started cluster (default: a RealCluster; `local` adds its lab actions and paths). */
  makeCluster?: (nodeNames: readonly string[], run: RunContext) => RealCluster;
}

export async function provisionRealCluster(
  spec: RealProviderSpec,
  topology: TopologySpec,
  run: RunContext,
): Promise<StartedCluster> {
  // the engine checked this before calling (src/contract/provider-support.ts); a direct caller gets the same skip
  const misfit = spec.misfit
    ? spec.misfit(topology)
    : realMisfit(spec.name as Exclude<RealProviderName, 'local'>, topology, spec.options);
  if (misfit) throw new UnsupportedScenarioError(spec.name, misfit.reason, misfit.hint);
  const fit = fitCni(topology, spec.options);
  const cni: RealCni = 'cni' in fit ? fit.cni : (topology.cni as RealCni);
  const kubeApi = spec.kubeApi ?? (await import('./client-kube-api.ts')).clientKubeApi;

  const guard = { created: spec.contextName(run), allowContexts: spec.options.allowContexts };
  const guarded = (access: KubeAccess) => (assertContextAllowed(access.context, guard), access);
  const nodeNames = topology.nodes.map((n) => n.name);
  const cluster = spec.makeCluster ? spec.makeCluster(nodeNames, run) : new RealCluster(nodeNames, run);
  try {
    const up = await spec.standUp({
      topology,
      cni,
      run,
      cluster,
      cli: (access) => new KubeCli(guarded(access), guard),
      api: (access) => kubeApi(guarded(access)),
    });
    const api = kubeApi(guarded(up.access));
    const nodeMap = new Map<string, string>();
    for (const [i, node] of topology.nodes.entries()) {
      const real = up.nodes[i]!;
      nodeMap.set(node.name, real.name);
      const target = real.target(`node/${node.name}`);
      cluster.nodes.set(node.name, target);
      for (const [key, value] of Object.entries(node.sysctls ?? {}))
        await target.exec(['sysctl', '-w', `${key}=${value}`]);
    }
    const listed = await api.listNodes();
    for (const n of listed) {
      const scenarioName = [...nodeMap].find(([, real]) => real === n.name)?.[0];
      if (scenarioName) cluster.addresses.set(`node/${scenarioName}`, n.internalIP);
    }
    const images = spec.images ?? spec.options;
    cluster.namespacePrefix = namespacePrefix(images, run);
    await deployWorkload({ api, cluster, topology, nodeMap, images, run });
    cluster.services = new ServiceChanges({
      provider: spec.name,
      api,
      topology,
      prefix: namespacePrefix(images, run),
      nodes: cluster.nodes,
      podIP: (pod) => cluster.address(`pod/${pod}`),
      kubeletVersion: listed[0]?.kubeletVersion,
      cni,
      signal: run.signal,
    });
    await cluster.services.waitEndpointsSynced();
    return cluster;
  } catch (e) {
    await cluster
      .destroy()
      .catch((teardown: Error) => run.log(`teardown after failed provisioning: ${teardown.message}`));
    throw e;
  }
}
