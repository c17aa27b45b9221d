// After a node's reboot the scenario's pods on it run in new sandboxes: their addresses may be new, their
// servers start again, and kube-proxy's rules must lead to the new addresses before a probe runs.
import type { TopologySpec } from '../../../model/scenario-schema.ts';
import { waitForReadyLine } from '../common/deploy-workload.ts';
import type { KubeApi } from '../common/kube-api.ts';
import type { NodePod } from './node-pods.ts';
import type { RealCluster } from '../common/real-cluster.ts';

export interface WorkloadBackInput {
  pods: readonly NodePod[];
  topology: TopologySpec;
  cluster: RealCluster;
  api: KubeApi;
}

export async function workloadBack({ pods, topology, cluster, api }: WorkloadBackInput): Promise<void> {
  for (const pod of pods) if (pod.podIP) cluster.addresses.set(`pod/${pod.name}`, pod.podIP);
  await Promise.all(
    pods.flatMap((pod) =>
      (topology.pods.find((p) => p.name === pod.name)?.serve ?? []).map((_, i) =>
        waitForReadyLine(api, pod.namespace, pod.name, `serve-${i}`),
      ),
    ),
  );
  await cluster.services?.waitEndpointsSynced();
}
