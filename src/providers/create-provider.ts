// Chooses a provider by its run configuration. Never falls back to another one: detect() says why one
// cannot run. Real-cluster providers are loaded only when asked for, and the Kubernetes client (more
// start-up than the whole netns lab) only once one provisions a cluster (real/common/provision-steps.ts):
// a run its detect() refuses, or whose every scenario it skips, never loads it. What a provider can do
// (providerSupport) is known without loading it.
import { HarnessError } from '../model/errors.ts';
import { PROVIDER_NAMES } from '../contract/provider-names.ts';
import type { ClusterProvider } from '../contract/provider.ts';
import type { KubeApi } from './real/common/kube-api.ts';
import type { KubeAccess } from './real/common/kube-cli.ts';
import { importOptional, requireInstalled } from './real/common/optional-module.ts';
import { configOf, providerSupport } from './provider-support-of.ts';
import type { RunConfig } from './run-config.ts';

export { PROVIDER_NAMES };

/** Test seams of the real providers (a recording Kubernetes API instead of a server). */
export interface ProviderDeps {
  kubeApi?: (access: KubeAccess) => KubeApi;
}

export { providerSupport };

export async function createProvider(config: RunConfig | string, deps: ProviderDeps = {}): Promise<ClusterProvider> {
  const c = configOf(config);
  switch (c.provider) {
    case 'netns':
      return new (await import('./netns/netns-provider.ts')).NetnsProvider();
    case 'local':
      requireInstalled('the local provider', ['@kubernetes/client-node']);
      return new (
        await importOptional('the local provider', () => import('./real/local/local-provider.ts'))
      ).LocalProvider(c.real, deps);
    case 'kind':
      requireInstalled('the kind provider', ['@kubernetes/client-node']);
      return new (
        await importOptional('the kind provider', () => import('./real/containers/kind/kind-provider.ts'))
      ).KindProvider(c.real, deps);
    case 'minikube':
      requireInstalled('the minikube provider', ['@kubernetes/client-node']);
      return new (
        await importOptional('the minikube provider', () => import('./real/containers/minikube/minikube-provider.ts'))
      ).MinikubeProvider(c.real, deps);
    case 'k3s':
      requireInstalled('the k3s provider', ['@kubernetes/client-node', '@testcontainers/k3s']);
      return new (
        await importOptional('the k3s provider', () => import('./real/containers/k3s/k3s-provider.ts'))
      ).K3sProvider(c.real, deps);
  }
  throw new HarnessError('USAGE', `unknown provider ${String(c.provider)}`, `one of: ${PROVIDER_NAMES.join(', ')}`);
}

/** A provider that can run here, or HarnessError ENVIRONMENT (exit 3) saying what is missing and how to fix it. */
export async function usableProvider(config: RunConfig | string, deps: ProviderDeps = {}): Promise<ClusterProvider> {
  const provider = await createProvider(config, deps);
  const availability = await provider.detect();
  if (!availability.ok)
    throw new HarnessError(
      'ENVIRONMENT',
      `provider ${provider.name} cannot run here: ${availability.reason}`,
      availability.hint,
    );
  return provider;
}
