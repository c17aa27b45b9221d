// Chooses a provider by name. Never falls back to another one: detect() says why one cannot run.
// Real-cluster providers are loaded only when asked for: they pull in testcontainers and the
// Kubernetes client, which cost more start-up than the whole netns lab.
import { HarnessError } from '../harness/model/errors.ts';
import { NetnsProvider } from './netns/netns-provider.ts';
import { PROVIDER_NAMES } from './provider-names.ts';
import type { ClusterProvider } from './provider.ts';
import { importOptional, requireInstalled } from './real/optional-module.ts';

export { PROVIDER_NAMES };

export async function createProvider(name: string): Promise<ClusterProvider> {
  switch (name) {
    case 'netns':
      return new NetnsProvider();
    case 'kind':
      requireInstalled('the kind provider', ['@kubernetes/client-node']);
      return new (await importOptional('the kind provider', () => import('./kind/kind-provider.ts'))).KindProvider();
    case 'minikube':
      requireInstalled('the minikube provider', ['@kubernetes/client-node']);
      return new (await importOptional('the minikube provider', () => import('./minikube/minikube-provider.ts'))).MinikubeProvider();
    case 'k3s':
      requireInstalled('the k3s provider', ['@kubernetes/client-node', '@testcontainers/k3s']);
      return new (await importOptional('the k3s provider', () => import('./k3s/k3s-provider.ts'))).K3sProvider();
  }
  throw new HarnessError('USAGE', `unknown provider ${name}`, `one of: ${PROVIDER_NAMES.join(', ')}`);
}

/** A provider that can run here, or HarnessError ENVIRONMENT (exit 3) saying what is missing and how to fix it. */
export async function usableProvider(name: string): Promise<ClusterProvider> {
  const provider = await createProvider(name);
  const availability = await provider.detect();
  if (!availability.ok) throw new HarnessError('ENVIRONMENT', `provider ${provider.name} cannot run here: ${availability.reason}`, availability.hint);
  return provider;
}
