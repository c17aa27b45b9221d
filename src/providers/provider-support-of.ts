// What a configured provider can do (capabilities and topology fit), known without loading it or the
// libraries it needs: `validate --provider` and the engine's skip decision read it before any lab.
import type { ProviderSupport } from '../contract/provider.ts';
import { NETNS_SUPPORT } from './netns/netns-support.ts';
import { localSupport } from './real/local/local-support.ts';
import { realSupport } from './real/containers/container-support.ts';
import { resolveRunConfig, type RunConfig } from './run-config.ts';

export const configOf = (config: RunConfig | string): RunConfig =>
  typeof config === 'string' ? resolveRunConfig({ provider: config }) : config;

/** Capabilities and topology fit of the configured provider: no provider code or library is loaded. */
export function providerSupport(config: RunConfig | string): ProviderSupport {
  const c = configOf(config);
  return c.provider === 'netns'
    ? NETNS_SUPPORT
    : c.provider === 'local'
      ? localSupport(c.real)
      : realSupport(c.provider, c.real);
}
