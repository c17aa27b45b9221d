// Whether a provider can run a scenario, decided from the file and the provider's declarations alone,
// before anything is provisioned: the requirements it lacks, else its topology misfit; a fix variant
// whose own steps or checks it cannot do is left out while another variant remains.
import { capabilityMeaning, type Capability, type Requirement } from '../model/capabilities.ts';
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

/** A fix variant the provider cannot run, and why; the scenario's other variants still run. */
export interface SkippedFix {
  fix: string;
  reason: string;
}

/**
 * The fix variants `support` cannot run, each for a need only that fix has (a step or check of its own).
 * None when every variant is out of reach: then the scenario as a whole is skipped.
 */
export function unrunnableFixes(support: ProviderSupport, scenario: Scenario): SkippedFix[] {
  const requirements = scenarioRequirements(scenario);
  const out: SkippedFix[] = [];
  for (const { name } of scenario.fixes) {
    const lacks = lacking(
      support,
      requirements.filter((r) => r.fix === name),
    );
    if (lacks) out.push({ fix: name, reason: lacks.reason });
  }
  return out.length === scenario.fixes.length ? [] : out;
}

/**
 * Why `support` cannot run `scenario` (a skip, with the reason), or undefined when it can, leaving out the
 * fix variants it cannot run while another remains (`unrunnableFixes`). The reason names every capability
 * it lacks, each with the first place in the file that needs it.
 */
export function unsupported(support: ProviderSupport, scenario: Scenario): Misfit | undefined {
  const skipped = new Set(unrunnableFixes(support, scenario).map((s) => s.fix));
  const needed = scenarioRequirements(scenario).filter((r) => !r.fix || !skipped.has(r.fix));
  const lacks = lacking(support, needed);
  if (lacks) return lacks;
  const runnable = { ...scenario, fixes: scenario.fixes.filter((f) => !skipped.has(f.name)) };
  const misfit = support.fit(scenario.topology) ?? support.fitSteps?.(runnable);
  return misfit && { reason: `${support.name} cannot run this scenario: ${misfit.reason}`, hint: misfit.hint };
}

function lacking(support: ProviderSupport, requirements: Requirement[]): Misfit | undefined {
  const missing = new Map<Capability, string>();
  for (const r of requirements)
    if (!support.capabilities.has(r.capability) && !missing.has(r.capability)) missing.set(r.capability, r.by);
  if (missing.size === 0) return undefined;
  const lacks = [...missing]
    .sort(([a], [b]) => rank(a) - rank(b))
    .map(([c, by]) => {
      const because = support.lacksBecause?.[c];
      return `${capabilityMeaning(c)} (needed by ${by})${because ? `: ${because}` : ''}`;
    });
  const hint = missing.has('host-kernel')
    ? "such a setting needs nodes with a kernel of their own (a VM per node); every provider here shares the host's kernel, and netrepro never changes the host"
    : 'run it with --provider netns';
  return { reason: `${support.name} cannot ${lacks.join('; nor ')}`, hint };
}
