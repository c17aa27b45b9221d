// The pods on one node, read from the API with kubectl (`get pods --field-selector spec.nodeName=`), and
// waiting on them: readiness as the kubelet reports it, never a fixed delay.
import { HarnessError } from '../../../model/errors.ts';
import type { KubeCli } from '../common/kube-cli.ts';

export interface NodePod {
  namespace: string;
  name: string;
  uid: string;
  /** Its containers' IDs, joined: they change when the kubelet starts the pod's containers anew. */
  containers: string;
  ready: boolean;
  podIP?: string;
}

export interface PodQuery {
  node: string;
  /** A namespace, or every namespace. */
  namespace: string | 'all';
  selector: string;
}

const POLL_MS = 500;

interface PodJson {
  metadata: { namespace: string; name: string; uid: string; deletionTimestamp?: string };
  status?: {
    podIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { containerID?: string }[];
  };
}

export async function nodePods(kubectl: KubeCli, query: PodQuery, signal?: AbortSignal): Promise<NodePod[]> {
  const where = query.namespace === 'all' ? ['-A'] : ['-n', query.namespace];
  const got = await kubectl.kubectl(
    ['get', 'pods', ...where, '-l', query.selector, '--field-selector', `spec.nodeName=${query.node}`, '-o', 'json'],
    { timeoutMs: 30_000, signal },
  );
  const items = (JSON.parse(got.stdout || '{"items":[]}') as { items: PodJson[] }).items;
  return items
    .filter((p) => !p.metadata.deletionTimestamp)
    .map((p) => ({
      namespace: p.metadata.namespace,
      name: p.metadata.name,
      uid: p.metadata.uid,
      containers: (p.status?.containerStatuses ?? []).map((c) => c.containerID ?? '').join(','),
      ready: p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
      ...(p.status?.podIP ? { podIP: p.status.podIP } : {}),
    }));
}

export interface PodWait {
  kubectl: KubeCli;
  query: PodQuery;
  /** What is awaited, for the error: `cilium on node x Ready again`. */
  what: string;
  /** Holds when the pods on the node are as awaited. */
  done: (pods: NodePod[]) => boolean;
  timeoutMs: number;
  signal: AbortSignal;
}

/**
 * Polls the node's pods until `done` holds; LAB_FAILED naming what was awaited and the pods last seen. A read
 * that fails counts as not yet: the API server itself restarts when its node does (a one-node kind cluster).
 */
export async function waitNodePods({ kubectl, query, what, done, timeoutMs, signal }: PodWait): Promise<NodePod[]> {
  const deadline = Date.now() + timeoutMs;
  let seen = 'none read yet';
  for (;;) {
    if (signal.aborted) throw new HarnessError('ABORTED', `aborted while waiting for ${what}`);
    try {
      const pods = await nodePods(kubectl, query, signal);
      if (done(pods)) return pods;
      seen = pods.map((p) => `${p.namespace}/${p.name} ${p.ready ? 'Ready' : 'not Ready'}`).join(', ') || 'none';
    } catch (e) {
      if (signal.aborted) throw e;
      seen = `the API did not answer: ${(e as Error).message.split('\n').at(-1)}`;
    }
    if (Date.now() > deadline)
      throw new HarnessError(
        'LAB_FAILED',
        `${what}: not within ${timeoutMs / 1000} s (pods there: ${seen})`,
        `kubectl get pods -A -o wide --field-selector spec.nodeName=${query.node} shows why`,
      );
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** All of `pods` are Ready and each is not `before`'s copy of it (a new pod, or its containers started anew). */
export const readyAnew = (before: readonly NodePod[]) => (pods: NodePod[]) =>
  pods.length > 0 &&
  pods.every(
    (p) => p.ready && p.containers !== '' && !before.some((b) => b.uid === p.uid && b.containers === p.containers),
  );

/** Each of `before` runs anew (same count, new containers), Ready again where it was Ready before. */
export const runningAnew = (before: readonly NodePod[]) => (pods: NodePod[]) =>
  pods.length === before.length &&
  pods.every(
    (p) =>
      p.containers !== '' &&
      !before.some((b) => b.uid === p.uid && b.containers === p.containers) &&
      (p.ready || !before.some((b) => b.uid === p.uid && b.ready)),
  );
