// The node components a real cluster runs as DaemonSets, and how a node keeps one of them off for a while:
// each DaemonSet gets a node affinity that excludes nodes labelled `netrepro.io/hold-<component>`, so
// labelling a node makes the DaemonSet controller remove that component's pod there, and removing the label
// brings a new one back. This is how a reboot starts a node's components in a chosen order.
import type { NodeComponentName as Component } from '../../../model/lab-action.ts';
import type { KubeCli } from '../common/kube-cli.ts';

export interface ComponentDaemonSet {
  namespace: string;
  name: string;
  /** The label selector of its pods. */
  selector: string;
}

/** kubeadm's kube-proxy (kind, minikube), the Cilium chart's agent, the flannel manifest's daemon. */
export const COMPONENT_DAEMONSETS: Record<Component, ComponentDaemonSet> = {
  'kube-proxy': { namespace: 'kube-system', name: 'kube-proxy', selector: 'k8s-app=kube-proxy' },
  cilium: { namespace: 'kube-system', name: 'cilium', selector: 'k8s-app=cilium' },
  flannel: { namespace: 'kube-flannel', name: 'kube-flannel-ds', selector: 'app=flannel' },
};

export const holdLabel = (component: Component) => `netrepro.io/hold-${component}`;

/**
 * The merge patch that gives a DaemonSet's pods the hold affinity. It replaces any node affinity the
 * DaemonSet had (neither kubeadm's kube-proxy nor the Cilium chart's agent has one; Cilium's pod
 * anti-affinity is kept).
 */
export function holdAffinityPatch(component: Component): object {
  const term = { matchExpressions: [{ key: holdLabel(component), operator: 'DoesNotExist' }] };
  return {
    spec: {
      template: {
        spec: {
          affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [term] } } },
        },
      },
    },
  };
}

/**
 * Gives each component's DaemonSet the hold affinity, one after the other in `order`, each rolled out before
 * the next: the changed pod template restarts every pod of it, so the last one patched ends up last started
 * on every node, as the scenario's start order has it.
 */
export async function makeHoldable(kubectl: KubeCli, order: readonly Component[]): Promise<void> {
  for (const component of order) {
    const ds = COMPONENT_DAEMONSETS[component];
    await kubectl.kubectl(
      [
        '-n',
        ds.namespace,
        'patch',
        'daemonset',
        ds.name,
        '--type',
        'merge',
        '-p',
        JSON.stringify(holdAffinityPatch(component)),
      ],
      { timeoutMs: 60_000 },
    );
    await kubectl.kubectl(['-n', ds.namespace, 'rollout', 'status', `daemonset/${ds.name}`, '--timeout=300s'], {
      timeoutMs: 310_000,
    });
  }
}
