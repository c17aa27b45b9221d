// Test support for node components on real clusters: the API server's answer to `kubectl get pods -o json`
// for the pods a reboot or a start by hand waits on (Cilium's agent, kube-proxy, the scenario's client), and
// the query the waits send for a node's pods.

import { holdAffinityPatch } from '../../src/providers/real/containers/component-daemonsets.ts';
export interface PodFixture {
  name: string;
  uid: string;
  containers: string[];
  ready: boolean;
  namespace?: string;
  podIP?: string;
}

/** `kubectl get pods -o json` as the API server answers it. */
export const podList = (pods: PodFixture[]) =>
  JSON.stringify({
    items: pods.map((p) => ({
      metadata: { namespace: p.namespace ?? 'kube-system', name: p.name, uid: p.uid },
      status: {
        ...(p.podIP ? { podIP: p.podIP } : {}),
        conditions: [{ type: 'Ready', status: p.ready ? 'True' : 'False' }],
        containerStatuses: p.containers.map((id) => ({ containerID: `containerd://${id}` })),
      },
    })),
  });

/** The kubectl words (after `--kubeconfig K --context C`) that read a node's pods matching `selector`. */
export const nodePodsQuery = (node: string, selector: string, namespace = 'kube-system') => [
  'get',
  'pods',
  ...(namespace === 'all' ? ['-A'] : ['-n', namespace]),
  '-l',
  selector,
  '--field-selector',
  `spec.nodeName=${node}`,
  '-o',
  'json',
];

export const ciliumPod = (containers: string[], ready = true): PodFixture => ({
  name: 'cilium-x',
  uid: 'u-cilium',
  containers,
  ready,
});

export const kubeProxyPod = (uid: string, ready = true): PodFixture => ({
  name: `kube-proxy-${uid}`,
  uid,
  containers: [`k-${uid}`],
  ready,
});

export const clientPod = (containers: string[], podIP: string): PodFixture => ({
  name: 'client',
  uid: 'u-client',
  namespace: 'nr-abc123-default',
  containers,
  ready: true,
  podIP,
});

/** The commands that make a component's DaemonSet holdable off a node: its affinity patched, the rollout awaited. */
export const holdPatchCommands = (kubectl: string, ds: string, component: 'kube-proxy' | 'cilium') => [
  `${kubectl} -n kube-system patch daemonset ${ds} --type merge -p ${JSON.stringify(holdAffinityPatch(component))}`,
  `${kubectl} -n kube-system rollout status daemonset/${ds} --timeout=300s`,
];
