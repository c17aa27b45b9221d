// KubeApi on a real API server through @kubernetes/client-node: typed CRUD and polling for readiness, each
// request sent again where the server asks for it (retry-after.ts);
// commands in containers go through the Exec API (pod-exec.ts).
import { CoreV1Api, Exec, KubeConfig, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { Agent, type AgentOptions } from 'node:https';
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { HarnessError } from '../../../model/errors.ts';
import type { ClusterNode, KubeApi } from './kube-api.ts';
import type { KubeAccess } from './kube-cli.ts';
import { PodExec } from './pod-exec.ts';
import { withRetryAfter } from './retry-after.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The request option that sends a patch as a JSON merge patch (the client's default is a JSON patch). */
export const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/**
 * The run's kubeconfig and context; with `access.socket`, every connection (requests and exec websockets)
 * goes through that unix socket, TLS and the server's name checked as for a direct connection.
 */
export function loadKubeConfig(access: KubeAccess): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(access.kubeconfig);
  kc.setCurrentContext(access.context);
  if (access.socket) {
    const socket = access.socket;
    // createAgent is private in the typings; it is the one place both fetch and the websockets take their agent from
    (kc as unknown as { createAgent: (cluster: unknown, options: AgentOptions) => Agent }).createAgent = (
      _cluster,
      options,
    ) => {
      const agent = new Agent({ ...options, keepAlive: true });
      (agent as unknown as { createConnection: (o: ConnectionOptions) => unknown }).createConnection = (o) =>
        tlsConnect({ ...o, socket: netConnect(socket) });
      return agent;
    };
  }
  return kc;
}

export function clientKubeApi(access: KubeAccess): KubeApi {
  const kc = loadKubeConfig(access);
  const core = kc.makeApiClient(CoreV1Api);
  const pods = new PodExec(new Exec(kc));
  return {
    listNodes: () => listNodes(core),
    async createNamespace(body) {
      await withRetryAfter(() => core.createNamespace({ body }));
    },
    async createConfigMap(body) {
      await withRetryAfter(() => core.createNamespacedConfigMap({ namespace: body.metadata!.namespace!, body }));
    },
    createService(body) {
      return withRetryAfter(() => core.createNamespacedService({ namespace: body.metadata!.namespace!, body }));
    },
    async createPod(body) {
      await withRetryAfter(() => core.createNamespacedPod({ namespace: body.metadata!.namespace!, body }));
    },
    async patchPod(namespace, name, patch) {
      await withRetryAfter(() => core.patchNamespacedPod({ name, namespace, body: patch }, mergePatch));
    },
    async patchService(namespace, name, patch) {
      await withRetryAfter(() => core.patchNamespacedService({ name, namespace, body: patch }, mergePatch));
    },
    async patchServiceStatus(namespace, name, patch) {
      await withRetryAfter(() => core.patchNamespacedServiceStatus({ name, namespace, body: patch }, mergePatch));
    },
    waitPodReady: (namespace, name, timeoutMs, ready = true) =>
      waitPod(core, { namespace, name, timeoutMs, until: ready ? 'ready' : 'not-ready' }),
    waitPodAddressed: async (namespace, name, timeoutMs) =>
      (await waitPod(core, { namespace, name, timeoutMs, until: 'addressed' })).status!.podIP!,
    async logs(pod) {
      return withRetryAfter(() =>
        core.readNamespacedPodLog({ name: pod.name, namespace: pod.namespace, container: pod.container }),
      );
    },
    exec: (pod, argv, options) => pods.exec(pod, argv, options),
    spawn: (pod, argv) => pods.spawn(pod, argv),
    async deletePod(namespace, name, timeoutMs) {
      await withRetryAfter(() => core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 1 }));
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const gone = await withRetryAfter(() => core.readNamespacedPod({ name, namespace })).then(
          () => false,
          (e: { code?: number }) => {
            if (e.code === 404) return true;
            throw e;
          },
        );
        if (gone) return;
        await sleep(250);
      }
      throw new HarnessError(
        'STEP_FAILED',
        `pod ${namespace}/${name} still exists ${timeoutMs} ms after its deletion`,
        "the kubelet removes a deleted pod once its containers and sandbox are stopped: check the node's kubelet log",
      );
    },
    async deleteNamespace(name) {
      try {
        await withRetryAfter(() => core.deleteNamespace({ name }));
      } catch (e) {
        if ((e as { code?: number }).code !== 404) throw e;
      }
    },
  };
}

async function listNodes(core: CoreV1Api): Promise<ClusterNode[]> {
  const list = await withRetryAfter(() => core.listNode());
  return list.items.map((n) => ({
    name: n.metadata!.name!,
    internalIP: n.status?.addresses?.find((a) => a.type === 'InternalIP')?.address ?? '',
    podCIDR: n.spec?.podCIDR,
    kubeletVersion: n.status?.nodeInfo?.kubeletVersion,
  }));
}

/** Which pod to wait for, how long, and for what. */
interface PodWait {
  namespace: string;
  name: string;
  timeoutMs: number;
  /**
   * ready: Running with an address and Ready; not-ready: every container started and the kubelet reporting it
   * not Ready; addressed: its sandbox has an address, whatever its containers do.
   */
  until: 'ready' | 'not-ready' | 'addressed';
}

function podIs(pod: V1Pod, until: PodWait['until']): boolean {
  const status = pod.status;
  if (!status?.podIP) return false;
  if (until === 'addressed') return true;
  const isReady = status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  const started = (status.containerStatuses ?? []).every((c) => c.state?.running);
  return until === 'ready' ? isReady : started && !!status.containerStatuses?.length && !isReady;
}

/** Polls the pod every 250 ms until it is as `until` asks; throws with its phase and waiting reasons at the deadline. */
async function waitPod(core: CoreV1Api, { namespace, name, timeoutMs, until }: PodWait): Promise<V1Pod> {
  const deadline = Date.now() + timeoutMs;
  let last: V1Pod | undefined;
  while (Date.now() < deadline) {
    last = await withRetryAfter(() => core.readNamespacedPod({ name, namespace }));
    if (podIs(last, until)) return last;
    await sleep(250);
  }
  const waiting = (last?.status?.containerStatuses ?? []).flatMap((c) =>
    c.state?.waiting ? [`${c.name}: ${c.state.waiting.reason} ${c.state.waiting.message ?? ''}`.trim()] : [],
  );
  throw new HarnessError(
    'LAB_FAILED',
    `pod ${namespace}/${name} not ${until === 'not-ready' ? 'running' : until} after ${timeoutMs} ms (phase ${last?.status?.phase ?? 'unknown'}${waiting.length ? `; ${waiting.join('; ')}` : ''})`,
    'images are pulled from Docker Hub on first use; check the node can pull them',
  );
}
