// minikube (docker driver): one profile per scenario lab; minikube installs the CNI itself.
//   KUBECONFIG=<run dir>/kubeconfig minikube start -p nr-<run>-cluster --driver=docker --nodes N
//     --cni=<bridge|flannel|cilium> --kubernetes-version=<pinned>
// Nodes are reached with `minikube ssh -p P --node <node>`; node names are P, P-m02, P-m03...
import { join } from 'node:path';
import type { TopologySpec } from '../../../model/scenario-schema.ts';
import { runCommand } from '../../../contract/command.ts';
import type { Availability, ClusterProvider, RunContext, StartedCluster } from '../../../contract/provider.ts';
import { CliNodeTarget, minikubeNode } from '../cli-node-target.ts';
import { detectTools } from '../cli-tools.ts';
import { waitNodesReady } from '../cni-install.ts';
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

export const minikubeNodeNames = (profile: string, count: number) =>
  Array.from({ length: count }, (_, i) => (i === 0 ? profile : `${profile}-m${String(i + 1).padStart(2, '0')}`));

export class MinikubeProvider extends RealProvider<'minikube'> implements ClusterProvider {
  constructor(
    options: RealClusterOptions | ResolvedRealOptions = {},
    private readonly deps: RealProviderDeps = {},
  ) {
    super('minikube', options);
  }

  detect(): Promise<Availability> {
    return detectTools('minikube', ['docker', 'minikube', 'kubectl']);
  }

  provision(topology: TopologySpec, run: RunContext): Promise<StartedCluster> {
    return provisionRealCluster(
      {
        name: 'minikube',
        options: this.options,
        contextName: clusterName,
        standUp: (i) => this.standUp(i),
        kubeApi: this.deps.kubeApi,
      },
      topology,
      run,
    );
  }

  private async standUp({ topology, cni, run, cluster, cli }: StandUpInput): Promise<StoodUp> {
    const profile = clusterName(run);
    assertOwnedName(profile, run.prefix, 'minikube profile');
    const dir = await prepareRunDir(this.options.workDir, run, cluster);
    const kubeconfig = join(dir, 'kubeconfig');
    // minikube writes its context into $KUBECONFIG: the run's own file, never ~/.kube/config
    const env = { KUBECONFIG: kubeconfig };
    cluster.onDestroy(`minikube profile ${profile}`, () =>
      runCommand(['minikube', 'delete', '-p', profile], { env, timeoutMs: 300_000 }),
    );
    run.log(`minikube start -p ${profile} (${topology.nodes.length} nodes, ${this.options.k8sVersion}, cni ${cni})`);
    await runCommand(
      [
        'minikube',
        'start',
        '-p',
        profile,
        '--driver=docker',
        `--nodes=${topology.nodes.length}`,
        `--cni=${cni}`,
        `--kubernetes-version=${this.options.k8sVersion}`,
        `--extra-config=kubeadm.pod-network-cidr=${topology.clusterCIDR}`,
        '--wait=all',
      ],
      { env, timeoutMs: 900_000, signal: run.signal },
    );
    const access = { kubeconfig, context: profile };
    await waitNodesReady(cli(access));
    const nodes = minikubeNodeNames(profile, topology.nodes.length);
    return {
      access,
      nodes: nodes.map((node) => ({
        name: node,
        target: (ref: string) =>
          new CliNodeTarget(ref, minikubeNode(profile, node, this.options.probeImage, run.runId)),
      })),
    };
  }
}
