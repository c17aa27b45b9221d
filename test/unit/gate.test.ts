import { describe, expect, it } from 'vitest';
import type { ScenarioResult } from '../../harness/engine/results.ts';
import { change } from '../../harness/gate/run-gate.ts';
import { assess } from '../../harness/gate/susceptibility.ts';
import { applyProfile, loadProfile } from '../../harness/model/profile.ts';
import { loadAllScenarios } from '../../harness/model/find-scenarios.ts';

const probe = (matched: boolean, summary = 'x') => ({ id: 'p', expected: 'ok', observed: 'ok' as const, matched, summary, durationMs: 1, detail: {} });
const result = (phases: [string, boolean][], extra: Partial<ScenarioResult> = {}): ScenarioResult => ({
  id: 's', title: 't', file: 'f', verdict: 'passed', durationMs: 1, labs: [], log: [],
  phases: phases.map(([name, ok]) => ({ name: name as 'baseline', variant: 'v', steps: [], probes: [probe(ok, `${name} summary`)], checks: [], durationMs: 1, status: ok ? 'passed' : 'failed' })),
  ...extra,
});

describe('gate', () => {
  it('classifies change: only immune -> susceptible is a regression', () => {
    expect(change('immune', 'susceptible')).toBe('regression');
    expect(change('susceptible', 'immune')).toBe('improvement');
    expect(change('susceptible', 'susceptible')).toBe('unchanged');
    expect(change('not-applicable', 'susceptible')).toBe('unchanged');
    // a side that could not be judged must not hide a regression
    expect(change('unjudged', 'susceptible')).toBe('unjudged');
    expect(change('immune', 'unjudged')).toBe('unjudged');
  });

  it('susceptible when the faulted expectations hold, immune when they do not, unjudged when the baseline fails or a step errored', () => {
    expect(assess(result([['baseline', true], ['faulted', true]])).verdict).toBe('susceptible');
    expect(assess(result([['baseline', true], ['faulted', false]]))).toEqual({ verdict: 'immune', reason: 'faulted summary' });
    expect(assess(result([['baseline', false], ['faulted', true]])).verdict).toBe('unjudged');
    expect(assess(result([['baseline', true]], { verdict: 'errored', error: { code: 'STEP_FAILED', message: 'step failed on pod/web' } }))).toEqual({ verdict: 'unjudged', reason: 'errored: step failed on pod/web' });
    expect(assess(result([], { verdict: 'skipped', skipReason: 'needs Docker' }))).toEqual({ verdict: 'not-applicable', reason: 'needs Docker' });
  });

  it('a faulted check that could not be read: unjudged when the symptom showed, immune when the probes saw none', () => {
    const unreadable = { id: 'drops', on: 'node/a', argv: [], expected: 'delta >= 1', observed: 'cannot be read before the probes: no line matched /DROP/', matched: false, evidence: [], unreadable: true as const };
    const shown = result([['baseline', true], ['faulted', true]]);
    shown.phases[1]!.checks.push(unreadable);
    expect(assess(shown)).toEqual({ verdict: 'unjudged', reason: "the symptom showed, but the faulted phase's evidence could not be read under this profile: check drops: cannot be read before the probes: no line matched /DROP/" });
    const absent = result([['baseline', true], ['faulted', false]]);
    absent.phases[1]!.checks.push(unreadable);
    expect(assess(absent)).toEqual({ verdict: 'immune', reason: 'faulted summary' });
  });

  it('a profile rewrites the topology: kube-proxy version and node sysctls', async () => {
    const race = (await loadAllScenarios()).find((s) => s.scenario.id === 'cilium-kube-proxy-forward-race')!.scenario;
    const applied = applyProfile(race, await loadProfile('kube-proxy-1.29-be-liberal'));
    expect(applied.topology.kubeProxy).toBe('1.29');
    expect(applied.topology.nodes[0]!.sysctls).toEqual({ 'net.netfilter.nf_conntrack_tcp_be_liberal': 1 });
    expect(race.topology.kubeProxy).toBe('1.15'); // the scenario itself is untouched
  });
});
