// The provisioning steps every real provider's provision() calls in order, as kind's providers call their
// common/ package:
//   assertFits -> clusterCni -> guardedKube -> (the provider makes its cluster, creates it and installs the CNI,
//   registering each teardown on the cluster as it goes) -> adoptNodes -> readNodeAddresses -> startWorkload
// A provider runs its steps inside try/catch and calls destroyAfterFailure: the teardown registered so far runs
// newest first, then the error is re-thrown. These steps never call a provider back.
import type { TopologySpec } from '../../../model/scenario-schema.ts';
import type { Misfit, RunContext, Target } from '../../../contract/provider.ts';
import { assertContextAllowed, type ContextGuard } from './context-guard.ts';
import { deployWorkload, namespacePrefix } from './deploy-workload.ts';
import type { ClusterNode, KubeApi } from './kube-api.ts';
import { KubeCli, type KubeAccess } from './kube-cli.ts';
import type { RealCluster } from './real-cluster.ts';
import type { RealCni, RealProviderName, ResolvedRealOptions } from './real-options.ts';
import { fitCni } from './scenario-fit.ts';
import { ServiceChanges } from './service-changes.ts';
import { UnsupportedScenarioError } from './unsupported.ts';
import type { WorkloadImages } from './workload-objects.ts';

/** Cluster, profile and container names: the run prefix first, so `clean` finds them. */
export const clusterName = (run: RunContext) => `${run.prefix}cluster`;

/** The scenario's node names, in its order: what a started cluster is made with. */
export const scenarioNodeNames = (topology: TopologySpec) => topology.nodes.map((n) => n.name);

export interface RealProviderDeps {
  /** The Kubernetes API; tests inject a recorder instead of a server. */
  kubeApi?: (access: KubeAccess) => KubeApi;
  /** How long a node component may take to be Ready after a start or reboot (default 180 s; tests make it short). */
  readyTimeoutMs?: number;
  /** How long and how often the bridge shape polls for the nodes' podCIDRs (tests make it short). */
  podCidrWait?: Polling;
}

/** A bounded poll: at most `timeoutMs`, every `intervalMs`. */
export interface Polling {
  timeoutMs?: number;
  intervalMs?: number;
}

/** A node of the created cluster: its Kubernetes name and how to exec on it, named by `ref`. */
export interface ClusterNodeHandle {
  name: string;
  target: (ref: string) => Target;
}

/** The engine checks the fit before provisioning (src/contract/provider-support.ts); a direct caller gets the same skip. */
export function assertFits(provider: RealProviderName, misfit: Misfit | undefined): void {
  if (misfit) throw new UnsupportedScenarioError(provider, misfit.reason, misfit.hint);
}

/** The CNI the cluster runs: the run's choice where the scenario allows it (flannel for bridge), else the scenario's. */
export function clusterCni(topology: TopologySpec, options: ResolvedRealOptions): RealCni {
  const fit = fitCni(topology, options);
  return 'cni' in fit ? fit.cni : (topology.cni as RealCni);
}

/** The injected API, or @kubernetes/client-node, loaded only once a cluster is provisioned (a run that builds none never loads it). */
export async function defaultKubeApi(deps: RealProviderDeps): Promise<(access: KubeAccess) => KubeApi> {
  return deps.kubeApi ?? (await import('./client-kube-api.ts')).clientKubeApi;
}

/** kubectl, helm and the API, each refusing a context other than the one this run created or one allowed by name. */
export class GuardedKube {
  constructor(
    readonly guard: ContextGuard,
    private readonly kubeApi: (access: KubeAccess) => KubeApi,
  ) {}

  cli(access: KubeAccess): KubeCli {
    assertContextAllowed(access.context, this.guard);
    return new KubeCli(access, this.guard);
  }

  api(access: KubeAccess): KubeApi {
    assertContextAllowed(access.context, this.guard);
    return this.kubeApi(access);
  }
}

export function guardedKube(
  created: string,
  options: Pick<ResolvedRealOptions, 'allowContexts'>,
  kubeApi: (access: KubeAccess) => KubeApi,
): GuardedKube {
  return new GuardedKube({ created, allowContexts: options.allowContexts }, kubeApi);
}

/**
 * Each scenario node's target on the cluster (`nodes` in scenario node order), its sysctls applied.
 * Returns scenario node name -> Kubernetes node name.
 */
export async function adoptNodes(
  cluster: RealCluster,
  topology: TopologySpec,
  nodes: readonly ClusterNodeHandle[],
): Promise<Map<string, string>> {
  const nodeMap = new Map<string, string>();
  for (const [i, node] of topology.nodes.entries()) {
    const real = nodes[i]!;
    nodeMap.set(node.name, real.name);
    const target = real.target(`node/${node.name}`);
    cluster.nodes.set(node.name, target);
    for (const [key, value] of Object.entries(node.sysctls ?? {}))
      await target.exec(['sysctl', '-w', `${key}=${value}`]);
  }
  return nodeMap;
}

/** Each scenario node's InternalIP as the API lists it, as `node/NAME`; returns the listed nodes. */
export async function readNodeAddresses(
  cluster: RealCluster,
  api: KubeApi,
  nodeMap: ReadonlyMap<string, string>,
): Promise<ClusterNode[]> {
  const listed = await api.listNodes();
  for (const n of listed) {
    const scenarioName = [...nodeMap].find(([, real]) => real === n.name)?.[0];
    if (scenarioName) cluster.addresses.set(`node/${scenarioName}`, n.internalIP);
  }
  return listed;
}

export interface WorkloadStart {
  provider: RealProviderName;
  api: KubeApi;
  cluster: RealCluster;
  topology: TopologySpec;
  nodeMap: ReadonlyMap<string, string>;
  images: WorkloadImages;
  run: RunContext;
  cni: RealCni;
  /** The nodes as readNodeAddresses listed them: their kubelet's release is the kube-proxy whose rules are awaited. */
  listed: readonly ClusterNode[];
}

/** The workload deployed, Service and endpoint changes wired, and every endpoint in every node's kube-proxy rules. */
export async function startWorkload(input: WorkloadStart): Promise<void> {
  const { provider, api, cluster, topology, nodeMap, images, run, cni, listed } = input;
  cluster.namespacePrefix = namespacePrefix(images, run);
  await deployWorkload({ api, cluster, topology, nodeMap, images, run });
  cluster.services = new ServiceChanges({
    provider,
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
}

/** After a failed step: undoes what was registered so far; a teardown error is logged, the step's error stays the one thrown. */
export async function destroyAfterFailure(cluster: RealCluster, run: RunContext): Promise<void> {
  await cluster
    .destroy()
    .catch((teardown: Error) => run.log(`teardown after failed provisioning: ${teardown.message}`));
}
