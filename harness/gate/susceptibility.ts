// Under a profile, is the cluster susceptible to an incident? Apply the scenario's trigger without
// the fix: the symptom shows (susceptible), it does not (immune), or it cannot be judged here.
import type { ScenarioResult } from '../engine/results.ts';

/**
 * not-applicable: nothing to judge here (skipped by the provider, a measurement). unjudged: the run should
 * have told and could not (a step that did not fire, a baseline that did not hold): the gate must not read
 * that as immune, nor let it hide a regression.
 */
export type Susceptibility = 'susceptible' | 'immune' | 'not-applicable' | 'unjudged';

export interface Assessment {
  verdict: Susceptibility;
  /** Why, in one line a person reads: the faulted probes' summaries, or why it was not judged. */
  reason: string;
}

/** Reads a fault-only run (baseline + faulted) of a scenario. */
export function assess(result: ScenarioResult): Assessment {
  if (result.verdict === 'skipped') return { verdict: 'not-applicable', reason: result.skipReason ?? 'skipped' };
  if (result.error) return { verdict: 'unjudged', reason: `errored: ${result.error.message.split('\n')[0]}` };
  const baseline = result.phases.find((p) => p.name === 'baseline');
  const faulted = result.phases.find((p) => p.name === 'faulted');
  if (!baseline || !faulted) return { verdict: 'unjudged', reason: 'the run did not reach the faulted phase' };
  const baselineMisses = [...baseline.probes.filter((p) => !p.matched).map((p) => p.mismatch), ...baseline.checks.filter((c) => !c.matched).map((c) => `${c.id}: ${c.observed}`)];
  if (baselineMisses.length > 0) return { verdict: 'unjudged', reason: `the healthy baseline did not hold: ${baselineMisses.join('; ')}` };
  // the symptom did not show on the wire: immune, whatever the checks could read
  const absent = faulted.probes.filter((p) => !p.matched).map((p) => p.summary);
  if (absent.length > 0) return { verdict: 'immune', reason: absent.join('; ') };
  // the symptom showed, but a check that could not be read says nothing either way: not immune
  const unreadable = faulted.checks.filter((c) => c.unreadable).map((c) => `check ${c.id}: ${c.observed}`);
  if (unreadable.length > 0) return { verdict: 'unjudged', reason: `the symptom showed, but the faulted phase's evidence could not be read under this profile: ${unreadable.join('; ')}` };
  // every probe showed the symptom (above); a check that did not is what says immune now
  const misses = faulted.checks.filter((c) => !c.matched).map((c) => `check ${c.id}: ${c.observed}`);
  if (misses.length === 0) return { verdict: 'susceptible', reason: faulted.probes.map((p) => p.summary).join('; ') };
  return { verdict: 'immune', reason: misses.join('; ') };
}
