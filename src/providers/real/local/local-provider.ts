// `local`: real Kubernetes v1.20.2 on this host, built once from Debian's `kubernetes` source package
// (`npm run build:kubernetes`), its nodes network namespaces of the run. It goes through the same
// real-cluster layer as kind, minikube and k3s (src/providers/real/common/: the provisioning steps, the workload
// through the Kubernetes API, the pod agent in pods, steps and checks); what it adds is in local-cluster-up.ts
// (bring-up) and local-cluster.ts (fabric, hosts, paths, Service and endpoint changes).
import { access, constants } from 'node:fs/promises';
import { HarnessError } from '../../../model/errors.ts';
import type { Scenario, TopologySpec } from '../../../model/scenario-schema.ts';
import type { Availability, ClusterProvider, Misfit, RunContext, StartedCluster } from '../../../contract/provider.ts';
import { applyOps } from '../../../dataplane/iptables-ops.ts';
import { flannelStart } from '../../../dataplane/node-components.ts';
import { bootKubeProxy } from '../../../dataplane/node-iptables.ts';
import type { KubeProxyConfig } from '../../../model/lab-action.ts';
import { findOnPath } from '../../../contract/find-on-path.ts';
import { helperBinary } from '../../namespaces/helper-build.ts';
import {
  adoptNodes,
  assertFits,
  clusterCni,
  defaultKubeApi,
  destroyAfterFailure,
  guardedKube,
  readNodeAddresses,
  scenarioNodeNames,
  startWorkload,
  type RealProviderDeps,
} from '../common/provision-steps.ts';
import { asResolved, type RealClusterOptions, type ResolvedRealOptions } from '../common/real-options.ts';
import { cleanLocalLeftovers } from './clean-local-leftovers.ts';
import { findLocalBuild, cacheRoot } from './local-build.ts';
import type { LocalApi } from './local-api.ts';
import { bringUpLocalCluster, type LocalClusterHandle, type LocalNode } from './local-cluster-up.ts';
import { LocalCluster, namespaceTarget } from './local-cluster.ts';
import { localNames } from './local-names.ts';
import { LOCAL_CAPABILITIES, LOCAL_K8S_VERSION, localMisfit } from './local-support.ts';
import { fitServiceSteps } from '../common/fit-service-steps.ts';

/** The agent inside the pod image (its native build, src/providers/netns/agent/pod-agent.c, static). */
export const LOCAL_AGENT_COMMAND = ['/netrepro/pod-agent'] as const;

/** Debian packages the local cluster runs (scripts/build-kubernetes.sh installs them). */
const PROGRAMS: Record<string, string> = {
  etcd: 'etcd-server',
  containerd: 'containerd',
  'containerd-shim-runc-v2': 'containerd',
  ctr: 'containerd',
  runc: 'runc',
  unshare: 'util-linux',
  nsenter: 'util-linux',
  openssl: 'openssl',
  iptables: 'iptables',
  bridge: 'iproute2',
};

export class LocalProvider implements ClusterProvider {
  readonly labsAreClusters = true;
  readonly name = 'local' as const;
  readonly capabilities = LOCAL_CAPABILITIES;
  readonly options: ResolvedRealOptions;

  constructor(
    options: RealClusterOptions | ResolvedRealOptions = {},
    private readonly deps: RealProviderDeps = {},
  ) {
    this.options = asResolved(options);
  }

  fit(topology: TopologySpec): Misfit | undefined {
    return localMisfit(topology, this.options);
  }

  fitSteps(scenario: Scenario): Misfit | undefined {
    return fitServiceSteps(scenario, LOCAL_K8S_VERSION, 'local');
  }

  async detect(): Promise<Availability> {
    const missing: string[] = [];
    const hints: string[] = [];
    if (process.platform !== 'linux' || process.getuid?.() !== 0)
      return {
        ok: false,
        reason: 'the local cluster needs Linux and root (network namespaces, cgroups, containerd)',
        hint: 'run as root on Linux',
      };
    if (!findLocalBuild()) {
      missing.push(`no Kubernetes build under ${cacheRoot()}`);
      hints.push('npm run build:kubernetes (once; about 11 min on 2 cores, cached by version)');
    }
    const absent = [];
    for (const [cmd, pkg] of Object.entries(PROGRAMS)) if (!(await findOnPath(cmd))) absent.push(`${cmd} (${pkg})`);
    if (absent.length > 0) {
      missing.push(`missing: ${absent.join(', ')}`);
      hints.push('npm run build:kubernetes installs them (Debian/Ubuntu)');
    }
    await access('/usr/lib/cni/bridge', constants.X_OK).catch(() => {
      missing.push('no /usr/lib/cni/bridge (containernetworking-plugins)');
      hints.push('apt-get install containernetworking-plugins');
    });
    return missing.length === 0
      ? { ok: true }
      : { ok: false, reason: `local needs: ${missing.join('; ')}`, hint: hints.join('; ') };
  }

  reap({ force }: { force: boolean }): Promise<string[]> {
    return cleanLocalLeftovers({ force });
  }

  async provision(topology: TopologySpec, run: RunContext): Promise<StartedCluster> {
    const build = findLocalBuild();
    if (!build) throw new Error('no Kubernetes build (npm run build:kubernetes)');
    assertFits('local', this.fit(topology));
    const cni = clusterCni(topology, this.options);
    const names = localNames(run.runId);
    const context = `${names.prefix}cluster`;
    const kube = guardedKube(context, this.options, await defaultKubeApi(this.deps));
    const cluster = new LocalCluster(scenarioNodeNames(topology), run, LOCAL_AGENT_COMMAND);
    cluster.hostAgent = [await helperBinary('pod-agent')];
    cluster.keptMark = names.keptMark;
    try {
      const up = await bringUpLocalCluster({
        build,
        names,
        topology,
        run,
        onDestroy: (what, action) => cluster.onDestroy(what, action),
        api: new BringUpApi(context, run.signal),
      });
      adoptFabricAndHosts(cluster, up, names.fabric);
      cluster.restartKubeProxy = kubeProxyRestarts(up, topology);
      if (topology.cni === 'flannel') await startFlannelRules(up.nodes, topology.clusterCIDR);
      run.log(
        `local cluster up in ${((up.timings['cluster up'] ?? 0) / 1000).toFixed(1)} s (${up.nodes.length} nodes, Kubernetes ${build.kubernetesVersion})`,
      );
      const api = kube.api({ kubeconfig: up.kubeconfig, context: up.context, socket: up.socket });
      const nodes = up.nodes.map((n) => ({
        name: n.kubeName,
        target: (ref: string) => namespaceTarget(ref, n.netns),
      }));
      const nodeMap = await adoptNodes(cluster, topology, nodes);
      const listed = await readNodeAddresses(cluster, api, nodeMap);
      const images = {
        probeImage: build.images.podRef,
        agentImage: build.images.podRef,
        agentCommand: LOCAL_AGENT_COMMAND,
        pullPolicy: 'Never',
        ownCluster: true,
      } as const;
      await startWorkload({ provider: 'local', api, cluster, topology, nodeMap, images, run, cni, listed });
      await cluster.resolveVeths(topology);
      return cluster;
    } catch (e) {
      await destroyAfterFailure(cluster, run);
      throw e;
    }
  }
}

/** The API calls the bring-up makes, on a client connected once the API server answers on the run's socket. */
class BringUpApi {
  private api?: LocalApi;

  constructor(
    private readonly context: string,
    private readonly signal: AbortSignal | undefined,
  ) {}

  async ready(kubeconfig: string, socket: string, timeoutMs: number): Promise<void> {
    // the Kubernetes client, loaded once a cluster is up to talk to
    const { localApi } = await import('./local-api.ts');
    this.api = localApi({ kubeconfig, context: this.context, socket }, this.signal);
    await this.api.ready(timeoutMs);
  }

  waitNodeRegistered(name: string, timeoutMs: number): Promise<void> {
    return this.connected().waitNodeRegistered(name, timeoutMs);
  }

  setPodCIDR(name: string, cidr: string): Promise<void> {
    return this.connected().setPodCIDR(name, cidr);
  }

  nodeReady(name: string, timeoutMs: number): Promise<void> {
    return this.connected().nodeReady(name, timeoutMs);
  }

  private connected(): LocalApi {
    if (!this.api) throw new HarnessError('LAB_FAILED', 'the local API server was asked before it answered');
    return this.api;
  }
}

/** The fabric, each node's port on it, and the hosts with their addresses, as the bring-up made them. */
function adoptFabricAndHosts(local: LocalCluster, up: LocalClusterHandle, fabricNetns: string): void {
  local.fabric = namespaceTarget('fabric', fabricNetns);
  for (const [i, n] of up.nodes.entries()) local.fabricPorts.set(n.scenarioName, `n${i}`);
  for (const h of up.hosts) {
    local.hosts.set(h.name, namespaceTarget(`host/${h.name}`, h.netns));
    local.addresses.set(`host/${h.name}`, h.ip);
  }
}

/** Each node's kube-proxy restarted with its configuration changed, the node's current one kept for the next restart. */
function kubeProxyRestarts(
  up: LocalClusterHandle,
  topology: TopologySpec,
): (node: string, config: Partial<KubeProxyConfig>) => Promise<void> {
  const current = new Map<string, KubeProxyConfig>();
  return async (node, config) => {
    const n = up.nodes.find((x) => x.scenarioName === node);
    if (!n) throw new HarnessError('LAB_FAILED', `no node ${node} in this cluster`);
    const { clusterCIDR, masqueradeAll } = bootKubeProxy(topology);
    const next = { ...(current.get(node) ?? { clusterCIDR, masqueradeAll }), ...config };
    await up.restartKubeProxy(n, next);
    current.set(node, next);
  };
}

/** flanneld's masquerade and forward rules, after kube-proxy's (its jumps appended when missing). */
async function startFlannelRules(nodes: LocalNode[], clusterCIDR: string): Promise<void> {
  await Promise.all(
    nodes.map((n) =>
      applyOps(namespaceTarget(`node/${n.scenarioName}`, n.netns), flannelStart(n.podCIDR, clusterCIDR)),
    ),
  );
}
