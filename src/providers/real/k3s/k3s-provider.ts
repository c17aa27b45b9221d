// k3s in one container (testcontainers' K3sContainer): flannel is k3s's own default; cilium needs
// `--flannel-backend=none --disable-network-policy` and a helm install. One node only.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import type { TopologySpec } from '../../../model/scenario-schema.ts';
import type { Availability, ClusterProvider, RunContext, StartedCluster } from '../../../contract/provider.ts';
import { CliNodeTarget, dockerNode } from '../cli-node-target.ts';
import { detectTools, requireHelm, type ToolName } from '../cli-tools.ts';
import { ciliumSettings, installCilium, waitNodesReady } from '../cni-install.ts';
import { assertOwnedName } from '../context-guard.ts';
import {
  clusterName,
  provisionRealCluster,
  type RealProviderDeps,
  type StandUpInput,
  type StoodUp,
} from '../provision-real-cluster.ts';
import type { RealClusterOptions, RealCni, ResolvedRealOptions } from '../real-options.ts';
import { RealProvider } from '../real-provider.ts';
import { prepareRunDir } from '../run-dir.ts';
import { startK3sWithTestcontainers, type StartK3s } from './k3s-container.ts';

export function k3sServerArgs(topology: TopologySpec, cni: RealCni): string[] {
  const kpr = cni === 'cilium' && ciliumSettings(topology).kubeProxyReplacement;
  return [
    'server',
    '--disable=traefik',
    `--cluster-cidr=${topology.clusterCIDR}`,
    ...(cni === 'cilium' ? ['--flannel-backend=none', '--disable-network-policy'] : []),
    ...(kpr ? ['--disable-kube-proxy'] : []),
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

  provision(topology: TopologySpec, run: RunContext): Promise<StartedCluster> {
    return provisionRealCluster(
      {
        name: 'k3s',
        options: this.options,
        contextName: clusterName,
        standUp: (i) => this.standUp(i),
        kubeApi: this.deps.kubeApi,
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
    });
    cluster.onDestroy(`k3s container ${name}`, () => k3s.stop());
    const access = { kubeconfig: join(dir, 'kubeconfig'), context: name };
    await writeFile(access.kubeconfig, renameContext(k3s.kubeconfig, name));
    const kubectl = cli(access);
    const [node] = await api(access).listNodes();
    if (cni === 'cilium')
      await installCilium(
        kubectl,
        this.options.ciliumChartVersion,
        ciliumSettings(topology),
        node && { host: node.internalIP, port: 6443 },
      );
    await waitNodesReady(kubectl);
    return {
      access,
      nodes: [
        {
          name: node?.name ?? name,
          target: (ref) => new CliNodeTarget(ref, dockerNode(name, this.options.probeImage, run.runId)),
        },
      ],
    };
  }
}
