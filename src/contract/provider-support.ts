// Whether a provider can run a scenario, decided from the file and the provider's declarations alone,
// before anything is provisioned: the first requirement it lacks, else its topology misfit.
import { capabilityMeaning, type Capability } from '../model/capabilities.ts';
import { scenarioRequirements } from '../model/scenario-requirements.ts';
import type { Scenario } from '../model/scenario-schema.ts';
import type { Misfit, ProviderSupport } from './provider.ts';

// the reason names what is most telling first: a lab action is the trigger itself, a node command a detail
const rank = (c: Capability) =>
  c === 'host-kernel'
    ? -1
    : c.startsWith('action/')
      ? 0
      : c === 'external-hosts'
        ? 1
        : c.startsWith('path/')
          ? 2
          : c === 'fabric'
            ? 3
            : 4;

/**
 * Why `support` cannot run `scenario` (a skip, with the reason), or undefined when it can. The reason
 * names every capability it lacks, each with the first place in the file that needs it.
 */
export function unsupported(support: ProviderSupport, scenario: Scenario): Misfit | undefined {
  const missing = new Map<Capability, string>();
  for (const r of scenarioRequirements(scenario))
    if (!support.capabilities.has(r.capability) && !missing.has(r.capability)) missing.set(r.capability, r.by);
  if (missing.size > 0) {
    const lacks = [...missing]
      .sort(([a], [b]) => rank(a) - rank(b))
      .map(([c, by]) => `${capabilityMeaning(c)} (needed by ${by})`);
    const hint = missing.has('host-kernel')
      ? "such a setting needs nodes with a kernel of their own (a VM per node); every provider here shares the host's kernel, and netrepro never changes the host"
      : 'run it with --provider netns';
    return { reason: `${support.name} cannot ${lacks.join('; nor ')}`, hint };
  }
  const misfit = support.fit(scenario.topology) ?? support.fitSteps?.(scenario);
  return misfit && { reason: `${support.name} cannot run this scenario: ${misfit.reason}`, hint: misfit.hint };
}
