// Under a profile, is the cluster susceptible to an incident? Apply the scenario's trigger without
// the fix and read the faulted phase: the symptom shows (susceptible), the cluster stays healthy (immune),
// neither (broken), or it cannot be judged here. Immune is read only from health, never from a mere miss.
import type { PhaseResult, ProbeResult, ScenarioResult } from '../run/results.ts';
import { observationOf } from '../run/run-scenario.ts';
import { matchExpectation } from '../../observe/expect/match-expectation.ts';
import type { CheckResult } from '../../observe/expect/run-checks.ts';
import { sameCheck, sameExpectation } from '../../model/falsifiable.ts';
import type { ExpectedSpec, Scenario } from '../../model/scenario-schema.ts';

/**
 * not-applicable: nothing to judge here (skipped by the provider, a measurement). broken: judged, but the
 * faulted phase shows neither the symptom nor health (a control broke, a probe saw a third outcome, the
 * symptom came without its mechanism). unjudged: the run should have told and could not (an error, a
 * baseline that did not hold, evidence that could not be read). Only susceptible and immune compare.
 */
export type Susceptibility = 'susceptible' | 'immune' | 'broken' | 'not-applicable' | 'unjudged';

export interface Assessment {
  verdict: Susceptibility;
  /** Why, in one line a person reads. */
  reason: string;
  /** The probes (by id) and checks (`check ID`) whose results decided the verdict. */
  decidedBy: string[];
}

const unjudged = (reason: string, decidedBy: string[] = []): Assessment => ({ verdict: 'unjudged', reason, decidedBy });

/** Reads a fault-only run (baseline + faulted) of `scenario` (as the profile made it). */
export function assess(result: ScenarioResult, scenario: Scenario): Assessment {
  if (result.verdict === 'skipped')
    return { verdict: 'not-applicable', reason: result.skipReason ?? 'skipped', decidedBy: [] };
  if (result.error) return unjudged(`errored: ${result.error.message.split('\n')[0]}`);
  const baseline = result.phases.find((p) => p.name === 'baseline');
  const faulted = result.phases.find((p) => p.name === 'faulted');
  if (!baseline || !faulted) return unjudged('the run did not reach the faulted phase');
  const baselineMisses = [...baseline.probes.filter((p) => !p.matched), ...baseline.checks.filter((c) => !c.matched)];
  if (baselineMisses.length > 0)
    return unjudged(
      `the healthy baseline did not hold: ${baselineMisses.map(missLine).join('; ')}`,
      baselineMisses.map(nameOf),
    );
  const roles = new FaultedRoles(scenario, faulted, result.addresses ?? {});
  return scenario.purpose === 'preserve' ? roles.preserved() : roles.reproduced();
}

/** Each faulted probe and check in its role: a symptom of the fault, or a control that holds either way. */
class FaultedRoles {
  private readonly healthy: Record<string, ExpectedSpec>[];
  private readonly controlProbes: ProbeResult[];
  private readonly symptomProbes: ProbeResult[];
  private readonly controlChecks: CheckResult[];
  private readonly symptomChecks: CheckResult[];

  constructor(
    scenario: Scenario,
    faulted: PhaseResult,
    private readonly addresses: Record<string, string>,
  ) {
    // health: what the baseline expects, and what each real fix (not a negative control) expects once applied
    this.healthy = [
      scenario.baseline.expect,
      ...scenario.fixes.filter((f) => f.control === undefined).map((f) => f.expect),
    ];
    // a faulted expectation equal to a healthy one is no symptom: it holds whether or not the cluster is susceptible
    const isControl = (p: ProbeResult) =>
      this.healthy.some((h) => sameExpectation(scenario.fault.expect[p.id], h[p.id]));
    this.controlProbes = faulted.probes.filter(isControl);
    this.symptomProbes = faulted.probes.filter((p) => !isControl(p));
    const checkSpec = (c: CheckResult) => scenario.fault.checks.find((s) => s.id === c.id);
    const isControlCheck = (c: CheckResult) => {
      const spec = checkSpec(c);
      return spec !== undefined && (spec.control || scenario.baseline.checks.some((b) => sameCheck(spec, b)));
    };
    const asserting = faulted.checks.filter((c) => !c.reported);
    this.controlChecks = asserting.filter(isControlCheck);
    this.symptomChecks = asserting.filter((c) => !isControlCheck(c));
  }

  reproduced(): Assessment {
    const brokenProbes = this.controlProbes.filter((p) => !p.matched);
    if (brokenProbes.length > 0)
      return this.broken(`a control broke: ${brokenProbes.map(missLine).join('; ')}`, brokenProbes);
    const controlsUnread = unreadable(this.controlChecks);
    if (controlsUnread) return controlsUnread;
    const brokenChecks = this.controlChecks.filter((c) => !c.matched);
    if (brokenChecks.length > 0)
      return this.broken(`a control broke: ${brokenChecks.map(missLine).join('; ')}`, brokenChecks);
    // healthy probes decide immune, whatever the symptom's checks could read (a rule this profile lacks)
    const healthy = this.symptomProbes.filter((p) => this.isHealthy(p));
    if (healthy.length > 0 && healthy.length === this.symptomProbes.length) {
      return {
        verdict: 'immune',
        reason: healthy.map((p) => `${p.id}: ${p.summary} (healthy)`).join('; '),
        decidedBy: healthy.map(nameOf),
      };
    }
    const symptomUnread = unreadable(this.symptomChecks);
    if (symptomUnread) return symptomUnread;
    const shown = this.symptomProbes.filter((p) => p.matched);
    const checksHeld = this.symptomChecks.every((c) => c.matched);
    if (this.symptomProbes.length === 0) {
      // the symptom is in the checks alone
      const held = this.symptomChecks.filter((c) => c.matched);
      if (held.length === this.symptomChecks.length)
        return { verdict: 'susceptible', reason: held.map(hitLine).join('; '), decidedBy: held.map(nameOf) };
      if (held.length === 0)
        return {
          verdict: 'immune',
          reason: this.symptomChecks.map(missLine).join('; '),
          decidedBy: this.symptomChecks.map(nameOf),
        };
      return this.broken(
        `only part of the symptom showed: ${held.map(hitLine).join('; ')}; not ${this.symptomChecks
          .filter((c) => !c.matched)
          .map(missLine)
          .join('; ')}`,
        this.symptomChecks,
      );
    }
    if (shown.length === this.symptomProbes.length) {
      if (checksHeld)
        return {
          verdict: 'susceptible',
          reason: shown.map((p) => `${p.id}: ${p.summary}`).join('; '),
          decidedBy: shown.map(nameOf),
        };
      const misses = this.symptomChecks.filter((c) => !c.matched);
      return this.broken(`the symptom showed without its mechanism: ${misses.map(missLine).join('; ')}`, misses);
    }
    const other = this.symptomProbes.filter((p) => !p.matched && !this.isHealthy(p));
    if (other.length > 0)
      return this.broken(`neither the symptom nor health: ${other.map(missLine).join('; ')}`, other);
    return this.broken(
      `the symptom showed only in part: ${shown.map((p) => `${p.id}: ${p.summary}`).join('; ')}; healthy: ${healthy.map(nameOf).join(', ')}`,
      [...shown, ...healthy],
    );
  }

  /** A change traffic must survive: immune when every probe still holds, susceptible when one broke. */
  preserved(): Assessment {
    const unread = unreadable([...this.symptomChecks, ...this.controlChecks]);
    if (unread) return unread;
    const unchanged = this.symptomChecks.filter((c) => !c.matched);
    if (unchanged.length > 0)
      return unjudged(`the change did not happen: ${unchanged.map(missLine).join('; ')}`, unchanged.map(nameOf));
    const brokenChecks = this.controlChecks.filter((c) => !c.matched);
    if (brokenChecks.length > 0)
      return this.broken(`a control broke: ${brokenChecks.map(missLine).join('; ')}`, brokenChecks);
    const probes = [...this.controlProbes, ...this.symptomProbes];
    const failed = probes.filter((p) => !p.matched);
    if (failed.length > 0)
      return {
        verdict: 'susceptible',
        reason: `traffic did not survive the change: ${failed.map(missLine).join('; ')}`,
        decidedBy: failed.map(nameOf),
      };
    return {
      verdict: 'immune',
      reason: `traffic survived the change: ${probes.map((p) => `${p.id}: ${p.summary}`).join('; ')}`,
      decidedBy: probes.map(nameOf),
    };
  }

  /** The probe observed what the baseline or a real fix expects of it. */
  private isHealthy(p: ProbeResult): boolean {
    const address = (ref: string) => this.addresses[ref] ?? ref;
    return this.healthy.some(
      (h) => h[p.id] !== undefined && matchExpectation(h[p.id]!, observationOf(p), address).matched,
    );
  }

  private broken(reason: string, decidedBy: (ProbeResult | CheckResult)[]): Assessment {
    return { verdict: 'broken', reason, decidedBy: decidedBy.map(nameOf) };
  }
}

/** Checks that could not be read say nothing either way: unjudged, should they be what decides. */
function unreadable(checks: readonly CheckResult[]): Assessment | undefined {
  const unread = checks.filter((c) => c.unreadable);
  if (unread.length === 0) return undefined;
  return unjudged(
    `the faulted phase's evidence could not be read under this profile: ${unread.map((c) => `check ${c.id}: ${c.observed}`).join('; ')}`,
    unread.map(nameOf),
  );
}

const isCheck = (x: ProbeResult | CheckResult): x is CheckResult => 'argv' in x;
const nameOf = (x: ProbeResult | CheckResult) => (isCheck(x) ? `check ${x.id}` : x.id);
const hitLine = (x: ProbeResult | CheckResult) =>
  isCheck(x) ? `check ${x.id}: ${x.observed}` : `${x.id}: ${x.summary}`;
const missLine = (x: ProbeResult | CheckResult) =>
  isCheck(x) ? `check ${x.id}: expected ${x.expected}, observed ${x.observed}` : `${x.id}: ${x.mismatch ?? x.summary}`;
