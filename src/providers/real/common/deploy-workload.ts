// Puts a topology's workload on a started cluster: namespaces, the agent ConfigMap, Services (their
// ClusterIPs read back), then pods pinned to their nodes; waits for Ready and for every served
// program to print its `ready` line. Each namespace is registered for teardown as it is created.
import { readFile } from 'node:fs/promises';
import { HarnessError } from '../../../model/errors.ts';
import { packagePath } from '../../../model/package-root.ts';
import type { TopologySpec } from '../../../model/scenario-schema.ts';
import type { RunContext } from '../../../contract/provider.ts';
import { dnsRecords as dnsRecordArgs } from '../../../contract/agent-program.ts';
import { predictedPlacements } from '../../../dataplane/render-node.ts';
import type { KubeApi } from './kube-api.ts';
import { PodTarget } from './pod-target.ts';
import { notReadyPods } from './scenario-fit.ts';
import type { RealCluster } from './real-cluster.ts';
import {
  agentCommandOf,
  agentConfigMap,
  clusterNamespace,
  namespaceObjects,
  podNamespaces,
  podObject,
  serviceObjects,
  type WorkloadImages,
} from './workload-objects.ts';

export const AGENT_SOURCE = packagePath('src/providers/netns/agent/pod-agent.mjs');
const READY_TIMEOUT_MS = 300_000;

export interface WorkloadInput {
  api: KubeApi;
  cluster: RealCluster;
  topology: TopologySpec;
  /** Scenario node name -> Kubernetes node name. */
  nodeMap: ReadonlyMap<string, string>;
  images: WorkloadImages;
  run: RunContext;
}

/** What the scenario's namespaces are prefixed with: a cluster of the run's own keeps them as they are. */
export const namespacePrefix = (images: WorkloadImages, run: RunContext) => (images.ownCluster ? '' : run.prefix);

export async function deployWorkload({ api, cluster, topology, nodeMap, images, run }: WorkloadInput): Promise<void> {
  const agentSource = await readFile(AGENT_SOURCE, 'utf8');
  const namespaces = podNamespaces(topology);
  // default and kube-system exist already on a cluster of the run's own
  const prefix = namespacePrefix(images, run);
  for (const ns of namespaceObjects(topology, prefix, run.runId)) {
    const name = ns.metadata!.name!;
    if (images.ownCluster) {
      await api.createNamespace(ns).catch((e: { code?: number }) => {
        if (e.code !== 409) throw e;
      });
      continue;
    }
    await api.createNamespace(ns);
    cluster.onDestroy(`namespace ${name}`, () => api.deleteNamespace(name));
  }
  if (images.agentCommand === undefined) {
    for (const ns of new Set(namespaces.values()))
      await api.createConfigMap(agentConfigMap(clusterNamespace(prefix, ns), agentSource, run.runId));
  }

  for (const [i, body] of serviceObjects(topology, prefix, run.runId, images.ownCluster).entries()) {
    const svc = topology.services[i]!;
    const created = await api.createService(body);
    // no cloud controller runs: the load balancer's address is published as one would publish it
    if (body.status?.loadBalancer)
      await api.patchServiceStatus(body.metadata!.namespace!, svc.name, { status: body.status });
    const ip = created.spec?.clusterIP;
    if (!ip) throw new HarnessError('LAB_FAILED', `service ${svc.namespace}/${svc.name} got no ClusterIP`);
    if (ip !== 'None') cluster.addresses.set(`svc/${svc.name}`, ip);
    if (svc.loadBalancerIP) cluster.addresses.set(`lb/${svc.name}`, svc.loadBalancerIP);
  }
  // a headless Service answers with its pods' addresses, which a cluster of the run's own hands out in order
  const predicted = predictedPlacements(topology);
  const dnsRecords = dnsRecordArgs(
    topology,
    (svc) => cluster.address(`svc/${svc}`),
    (pod) => predicted.get(pod)?.ip ?? '',
  ).map((r) => `--record=${r}`);

  const notReady = notReadyPods(topology);
  const create = async (pod: TopologySpec['pods'][number]) => {
    const namespace = clusterNamespace(prefix, namespaces.get(pod.name)!);
    const nodeName = nodeMap.get(pod.node);
    if (!nodeName)
      throw new HarnessError('LAB_FAILED', `pod ${pod.name} is on node ${pod.node}, which the cluster does not have`);
    const address = (ref: string) => cluster.address(ref);
    await api.createPod(podObject({ pod, namespace, nodeName, dnsRecords, address }, topology, images, run.runId));
    cluster.pods.set(pod.name, new PodTarget(api, namespace, pod.name, agentCommandOf(images)));
    return namespace;
  };
  if (images.ownCluster) {
    // one pod at a time per node, each created once the one before has its address, so host-local hands out
    // .2, .3, ... in the scenario's pod order, as in the netns lab (and `netrepro render`): the same pod IPs,
    // hence the same KUBE-SEP chain names
    await Promise.all(
      [...new Set(topology.pods.map((p) => p.node))].map(async (node) => {
        for (const pod of topology.pods.filter((p) => p.node === node))
          await api.waitPodAddressed(await create(pod), pod.name, READY_TIMEOUT_MS);
      }),
    );
  } else {
    for (const pod of topology.pods) await create(pod);
  }
  await Promise.all(
    topology.pods.map(async (pod) => {
      const namespace = clusterNamespace(prefix, namespaces.get(pod.name)!);
      const ready = await api.waitPodReady(namespace, pod.name, READY_TIMEOUT_MS, !notReady.has(pod.name));
      cluster.addresses.set(`pod/${pod.name}`, ready.status!.podIP!);
      await Promise.all((pod.serve ?? []).map((_, i) => waitForReadyLine(api, namespace, pod.name, `serve-${i}`)));
    }),
  );
  run.log(`workload up: ${topology.pods.length} pods, ${topology.services.length} services`);
}

/** The agent prints `ready <program> <port>` once listening; a Ready pod may not be there yet. */
export async function waitForReadyLine(
  api: KubeApi,
  namespace: string,
  name: string,
  container: string,
): Promise<void> {
  const deadline = Date.now() + 60_000;
  let logs = '';
  while (Date.now() < deadline) {
    logs = await api.logs({ namespace, name, container });
    if (/^ready /m.test(logs)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new HarnessError(
    'LAB_FAILED',
    `${container} in pod ${namespace}/${name} never printed its ready line; its log:\n${logs.trim().split('\n').slice(-10).join('\n')}`,
  );
}
