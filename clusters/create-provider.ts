// Chooses a provider by name. Never falls back to another one: detect() says why one cannot run.
import { HarnessError } from '../harness/model/errors.ts';
import { NetnsProvider } from './netns/netns-provider.ts';
import type { ClusterProvider } from './provider.ts';

export const PROVIDER_NAMES = ['netns'] as const;

export function createProvider(name: string): ClusterProvider {
  if (name === 'netns') return new NetnsProvider();
  throw new HarnessError('USAGE', `unknown provider ${name}`, `one of: ${PROVIDER_NAMES.join(', ')}`);
}
