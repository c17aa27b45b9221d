// The embedded lab can do everything a scenario can ask for: it builds the nodes, the fabric and the
// hosts itself, runs the components by hand and holds each node's bpffs. Declared apart from the
// provider so `validate --provider netns` loads no lab code.
import { ALL_CAPABILITIES } from '../../model/capabilities.ts';
import type { ProviderSupport } from '../../contract/provider.ts';

export const NETNS_SUPPORT: ProviderSupport = {
  name: 'netns',
  capabilities: new Set(ALL_CAPABILITIES),
  fit: () => undefined,
};
