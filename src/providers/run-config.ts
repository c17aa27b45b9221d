// One resolved run configuration: the command line's flags, the NETREPRO_* environment and the profile,
// resolved once into the object a provider is created from. Nothing below reads process.env for it.
import { HarnessError } from '../model/errors.ts';
import type { Profile } from '../model/profile.ts';
import { PROVIDER_NAMES } from '../contract/provider-names.ts';
import type { ProviderName } from '../contract/provider.ts';
import { resolveRealOptions, type RealClusterOptions, type ResolvedRealOptions } from './real/common/real-options.ts';

export interface RunConfig {
  readonly provider: ProviderName;
  /** The profile this configuration was resolved under, if any. */
  readonly profile?: string;
  /** kind/minikube/k3s: options, then the profile's `real` versions, then NETREPRO_* variables, then the pinned defaults. */
  readonly real: ResolvedRealOptions;
}

export interface RunConfigInput {
  /** `--provider` (default netns). */
  provider?: string;
  profile?: Profile;
  /** Programmatic options (the library API); they win over the profile and the environment. */
  real?: RealClusterOptions;
}

export function resolveRunConfig(input: RunConfigInput = {}, env: NodeJS.ProcessEnv = process.env): RunConfig {
  const provider = input.provider ?? 'netns';
  if (!(PROVIDER_NAMES as readonly string[]).includes(provider))
    throw new HarnessError('USAGE', `unknown provider ${provider}`, `one of: ${PROVIDER_NAMES.join(', ')}`);
  return {
    provider: provider as ProviderName,
    profile: input.profile?.name,
    real: resolveRealOptions(input.real, env, input.profile?.real),
  };
}
