// Upstream kube-proxy as a DaemonSet on a k3s cluster started with --disable-kube-proxy, shaped like kubeadm's
// (cmd/kubeadm/app/phases/addons/proxy/manifests.go): a ServiceAccount bound to the built-in
// system:node-proxier role, a ConfigMap holding its kubeconfig (the pod's ServiceAccount token and CA) and its
// KubeProxyConfiguration, and the DaemonSet running registry.k8s.io/kube-proxy at the Kubernetes release k3s
// runs, privileged on the host network, tolerating every taint. Cilium beside kube-proxy needs kube-proxy as a
// pod: only a DaemonSet can be held off a rebooting node and let back after Cilium (component-daemonsets.ts).
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { HarnessError } from '../../../../model/errors.ts';
import type { KubeCli } from '../../common/kube-cli.ts';

/**
 * The API server as a pod on the host network of a one-node k3s cluster reaches it: the loopback, where k3s's
 * own admin kubeconfig points (/etc/rancher/k3s/k3s.yaml). It stays right when a restarted node container gets
 * another address on docker's network, which the node's address would not.
 */
export const K3S_LOCAL_API = { host: '127.0.0.1', port: 6443 } as const;

/** `v1.35.1+k3s1` (a k3s node's kubelet version) to the upstream release it is built from, `v1.35.1`. */
export function upstreamRelease(kubeletVersion: string): string {
  const release = /^(v\d+\.\d+\.\d+)(?:\+k3s\d+)?$/.exec(kubeletVersion)?.[1];
  if (!release)
    throw new HarnessError('LAB_FAILED', `k3s node reports kubelet version ${kubeletVersion}, not vX.Y.Z+k3sN`);
  return release;
}

export interface KubeProxyInput {
  /** The upstream release, e.g. v1.35.1: the image tag. */
  release: string;
  clusterCIDR: string;
  /** The API server URL kube-proxy talks to (not through a Service: it is what translates Services). */
  server: string;
}

const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** The objects, in the order they are applied, as one multi-document YAML. */
export function kubeProxyManifest({ release, clusterCIDR, server }: KubeProxyInput): string {
  const kubeconfig = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'default', cluster: { 'certificate-authority': `${SA_DIR}/ca.crt`, server } }],
    contexts: [{ name: 'default', context: { cluster: 'default', namespace: 'default', user: 'default' } }],
    'current-context': 'default',
    users: [{ name: 'default', user: { tokenFile: `${SA_DIR}/token` } }],
  };
  const config = {
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    clientConnection: { kubeconfig: '/var/lib/kube-proxy/kubeconfig.conf' },
    clusterCIDR,
    mode: 'iptables',
    // the node is a container: nf_conntrack_max is the host's, shared with every other namespace (kind's
    // kubeadm config leaves it alone the same way)
    conntrack: { maxPerCore: 0 },
  };
  const objects = [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'kube-proxy', namespace: 'kube-system' } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'kubeadm:node-proxier' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:node-proxier' },
      subjects: [{ kind: 'ServiceAccount', name: 'kube-proxy', namespace: 'kube-system' }],
    },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'kube-proxy', namespace: 'kube-system', labels: { app: 'kube-proxy' } },
      data: { 'kubeconfig.conf': stringify(kubeconfig), 'config.conf': stringify(config) },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'kube-proxy', namespace: 'kube-system', labels: { 'k8s-app': 'kube-proxy' } },
      spec: {
        selector: { matchLabels: { 'k8s-app': 'kube-proxy' } },
        updateStrategy: { type: 'RollingUpdate' },
        template: {
          metadata: { labels: { 'k8s-app': 'kube-proxy' } },
          spec: {
            priorityClassName: 'system-node-critical',
            containers: [
              {
                name: 'kube-proxy',
                image: `registry.k8s.io/kube-proxy:${release}`,
                imagePullPolicy: 'IfNotPresent',
                command: [
                  '/usr/local/bin/kube-proxy',
                  '--config=/var/lib/kube-proxy/config.conf',
                  '--hostname-override=$(NODE_NAME)',
                ],
                securityContext: { privileged: true },
                volumeMounts: [
                  { mountPath: '/var/lib/kube-proxy', name: 'kube-proxy' },
                  { mountPath: '/run/xtables.lock', name: 'xtables-lock', readOnly: false },
                  { mountPath: '/lib/modules', name: 'lib-modules', readOnly: true },
                ],
                env: [{ name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }],
              },
            ],
            hostNetwork: true,
            serviceAccountName: 'kube-proxy',
            volumes: [
              { name: 'kube-proxy', configMap: { name: 'kube-proxy' } },
              { name: 'xtables-lock', hostPath: { path: '/run/xtables.lock', type: 'FileOrCreate' } },
              { name: 'lib-modules', hostPath: { path: '/lib/modules' } },
            ],
            tolerations: [{ operator: 'Exists' }],
            nodeSelector: { 'kubernetes.io/os': 'linux' },
          },
        },
      },
    },
  ];
  return objects.map((o) => stringify(o)).join('---\n');
}

/** Writes the manifest into the run directory, applies it and waits for the DaemonSet's rollout. */
export async function deployKubeProxy(kubectl: KubeCli, dir: string, input: KubeProxyInput): Promise<void> {
  const file = join(dir, 'kube-proxy.yaml');
  await writeFile(file, kubeProxyManifest(input));
  await kubectl.kubectl(['apply', '-f', file], { timeoutMs: 120_000 });
  await kubectl.kubectl(['-n', 'kube-system', 'rollout', 'status', 'daemonset/kube-proxy', '--timeout=300s'], {
    timeoutMs: 310_000,
  });
}
