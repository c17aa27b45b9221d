// A KubeApi that follows its kubeconfig file: when the file changes, the next call loads it anew. minikube's
// node containers publish the API server on a host port docker picks at each start, so after the control
// plane's container restarts `minikube update-context` writes the new port there, and calls must go to it.
import { statSync } from 'node:fs';
import type { KubeApi } from '../common/kube-api.ts';
import type { KubeAccess } from '../common/kube-cli.ts';

export function kubeconfigFollowingApi(access: KubeAccess, load: (access: KubeAccess) => KubeApi): KubeApi {
  const written = () => {
    try {
      return statSync(access.kubeconfig).mtimeMs;
    } catch {
      return undefined;
    }
  };
  let loadedFrom = written();
  let api = load(access);
  const current = () => {
    const now = written();
    if (now !== loadedFrom) {
      loadedFrom = now;
      api = load(access);
    }
    return api;
  };
  return {
    listNodes: () => current().listNodes(),
    createNamespace: (body) => current().createNamespace(body),
    createConfigMap: (body) => current().createConfigMap(body),
    createService: (body) => current().createService(body),
    createPod: (body) => current().createPod(body),
    patchPod: (namespace, name, patch) => current().patchPod(namespace, name, patch),
    patchService: (namespace, name, patch) => current().patchService(namespace, name, patch),
    patchServiceStatus: (namespace, name, patch) => current().patchServiceStatus(namespace, name, patch),
    waitPodReady: (namespace, name, timeoutMs, ready) => current().waitPodReady(namespace, name, timeoutMs, ready),
    waitPodAddressed: (namespace, name, timeoutMs) => current().waitPodAddressed(namespace, name, timeoutMs),
    logs: (pod) => current().logs(pod),
    exec: (pod, argv, options) => current().exec(pod, argv, options),
    spawn: (pod, argv) => current().spawn(pod, argv),
    deleteNamespace: (name) => current().deleteNamespace(name),
    deletePod: (namespace, name, timeoutMs) => current().deletePod(namespace, name, timeoutMs),
  };
}
