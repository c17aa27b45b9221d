// Chooses a provider by name. Never falls back to another one: detect() says why one cannot run.
import { HarnessError } from '../harness/model/errors.ts';
import { K3sProvider } from './k3s/k3s-provider.ts';
import { KindProvider } from './kind/kind-provider.ts';
import { MinikubeProvider } from './minikube/minikube-provider.ts';
import { NetnsProvider } from './netns/netns-provider.ts';
import type { ClusterProvider } from './provider.ts';

export const PROVIDER_NAMES = ['netns', 'kind', 'minikube', 'k3s'] as const;

export function createProvider(name: string): ClusterProvider {
  if (name === 'netns') return new NetnsProvider();
  if (name === 'kind') return new KindProvider();
  if (name === 'minikube') return new MinikubeProvider();
  if (name === 'k3s') return new K3sProvider();
  throw new HarnessError('USAGE', `unknown provider ${name}`, `one of: ${PROVIDER_NAMES.join(', ')}`);
}
