import { describe, expect, it } from 'vitest';
import type { ProbeResult, ScenarioResult } from '../../src/engine/run/results.ts';
import type { CheckResult } from '../../src/observe/expect/run-checks.ts';
import type { Outcome } from '../../src/model/outcome.ts';
import type { CheckSpec, Scenario } from '../../src/model/scenario-schema.ts';
import { change } from '../../src/engine/gate/run-gate.ts';
import { assess } from '../../src/engine/gate/susceptibility.ts';
import { applyProfile, loadProfile } from '../../src/model/profile.ts';
import { loadAllScenarios } from '../../src/model/find-scenarios.ts';

const probe = (
  id: string,
  matched: boolean,
  observed: Outcome = 'ok',
  summary = `${id} saw ${observed}`,
): ProbeResult => ({ id, expected: 'x', observed, matched, summary, durationMs: 1, detail: {} });
type Probe = ProbeResult;
const check = (id: string, matched: boolean, extra: Partial<CheckResult> = {}): CheckResult => ({
  id,
  on: 'node/a',
  argv: [],
  expected: 'delta >= 1',
  observed: matched ? 'delta 3' : 'delta 0',
  matched,
  evidence: [],
  ...extra,
});
const result = (
  baseline: Probe[],
  faulted: Probe[],
  checks: CheckResult[] = [],
  extra: Partial<ScenarioResult> = {},
): ScenarioResult => ({
  id: 's',
  title: 't',
  file: 'f',
  verdict: 'passed',
  durationMs: 1,
  labs: [],
  log: [],
  addresses: {},
  phases: [
    { name: 'baseline', variant: 'v', steps: [], probes: baseline, checks: [], durationMs: 1, status: 'passed' },
    { name: 'faulted', variant: 'v', steps: [], probes: faulted, checks, durationMs: 1, status: 'passed' },
  ],
  ...extra,
});
const counter = (id: string, delta: number | { min: number }, control = false) =>
  ({
    id,
    on: 'node/a',
    cmd: 'iptables -S',
    counter: '(\\d+)',
    sum: false,
    absentIsZero: false,
    background: false,
    control,
    expect: { delta },
  }) as CheckSpec;
/** A symptom probe `sym` (ok -> timeout, fixed: ok) and a control probe `ctl` (ok throughout), one symptom check. */
const scenario = {
  purpose: 'reproduce',
  baseline: { expect: { sym: 'ok', ctl: 'ok' }, checks: [counter('drops', 0)] },
  fault: { expect: { sym: 'timeout', ctl: 'ok' }, checks: [counter('drops', { min: 1 })] },
  fixes: [{ name: 'fix', expect: { sym: 'ok', ctl: 'ok' }, checks: [] }],
} as unknown as Scenario;
const healthy = [probe('sym', true), probe('ctl', true)];

describe('gate', () => {
  it('classifies change: immune -> susceptible and anything -> broken are regressions', () => {
    expect(change('immune', 'susceptible')).toBe('regression');
    expect(change('susceptible', 'immune')).toBe('improvement');
    expect(change('susceptible', 'susceptible')).toBe('unchanged');
    expect(change('not-applicable', 'susceptible')).toBe('unchanged');
    // a side that could not be judged must not hide a regression
    expect(change('unjudged', 'susceptible')).toBe('unjudged');
    expect(change('immune', 'unjudged')).toBe('unjudged');
    expect(change('immune', 'broken')).toBe('regression');
    expect(change('susceptible', 'broken')).toBe('regression');
    expect(change('broken', 'broken')).toBe('unjudged');
    expect(change('broken', 'immune')).toBe('improvement');
    expect(change('broken', 'susceptible')).toBe('unjudged');
  });

  it('susceptible when every faulted expectation holds; immune only from healthy symptom probes and held controls', () => {
    expect(
      assess(result(healthy, [probe('sym', true, 'timeout'), probe('ctl', true)], [check('drops', true)]), scenario),
    ).toMatchObject({ verdict: 'susceptible', decidedBy: ['sym'] });
    expect(
      assess(result(healthy, [probe('sym', false, 'ok'), probe('ctl', true)], [check('drops', false)]), scenario),
    ).toEqual({ verdict: 'immune', reason: 'sym: sym saw ok (healthy)', decidedBy: ['sym'] });
  });

  it('broken, never immune: a control that broke, a third outcome, the symptom without its mechanism', () => {
    const controlBroke = assess(
      result(healthy, [
        probe('sym', false, 'ok'),
        { ...probe('ctl', false, 'timeout'), mismatch: 'expected ok, observed timeout' },
      ]),
      scenario,
    );
    expect(controlBroke).toEqual({
      verdict: 'broken',
      reason: 'a control broke: ctl: expected ok, observed timeout',
      decidedBy: ['ctl'],
    });
    expect(assess(result(healthy, [probe('sym', false, 'error'), probe('ctl', true)]), scenario)).toMatchObject({
      verdict: 'broken',
      decidedBy: ['sym'],
    });
    expect(
      assess(result(healthy, [probe('sym', true, 'timeout'), probe('ctl', true)], [check('drops', false)]), scenario),
    ).toMatchObject({ verdict: 'broken', decidedBy: ['check drops'] });
  });

  it('unjudged when the baseline fails, a step errored, or the evidence that decides cannot be read; skipped is not-applicable', () => {
    expect(
      assess(
        result(
          [probe('sym', false, 'timeout'), probe('ctl', true)],
          [probe('sym', true, 'timeout'), probe('ctl', true)],
        ),
        scenario,
      ).verdict,
    ).toBe('unjudged');
    expect(
      assess(
        result([], [], [], { verdict: 'errored', error: { code: 'STEP_FAILED', message: 'step failed on pod/web' } }),
        scenario,
      ),
    ).toEqual({ verdict: 'unjudged', reason: 'errored: step failed on pod/web', decidedBy: [] });
    expect(assess(result([], [], [], { verdict: 'skipped', skipReason: 'needs Docker' }), scenario)).toEqual({
      verdict: 'not-applicable',
      reason: 'needs Docker',
      decidedBy: [],
    });
    const unreadable = check('drops', false, {
      observed: 'cannot be read before the probes: no line matched /DROP/',
      unreadable: true,
    });
    expect(
      assess(result(healthy, [probe('sym', true, 'timeout'), probe('ctl', true)], [unreadable]), scenario),
    ).toMatchObject({ verdict: 'unjudged', decidedBy: ['check drops'] });
    // healthy probes decide immune whatever the symptom's check could read (a rule this profile does not write)
    expect(
      assess(result(healthy, [probe('sym', false, 'ok'), probe('ctl', true)], [unreadable]), scenario).verdict,
    ).toBe('immune');
  });

  it('preserve: immune while traffic survives the change, susceptible when it breaks, unjudged when the change did not happen', () => {
    const preserve = {
      ...scenario,
      purpose: 'preserve',
      fault: { expect: { sym: 'ok', ctl: 'ok' }, checks: [counter('drops', { min: 1 })] },
    } as unknown as Scenario;
    expect(assess(result(healthy, healthy, [check('drops', true)]), preserve).verdict).toBe('immune');
    expect(
      assess(result(healthy, [probe('sym', false, 'timeout'), probe('ctl', true)], [check('drops', true)]), preserve),
    ).toMatchObject({ verdict: 'susceptible', decidedBy: ['sym'] });
    expect(assess(result(healthy, healthy, [check('drops', false)]), preserve)).toMatchObject({
      verdict: 'unjudged',
      decidedBy: ['check drops'],
    });
  });

  it('a profile rewrites the topology: kube-proxy version and node sysctls', async () => {
    const race = (await loadAllScenarios()).find((s) => s.scenario.id === 'cilium-kube-proxy-forward-race')!.scenario;
    const applied = applyProfile(race, await loadProfile('kube-proxy-1.29-be-liberal'));
    expect(applied.topology.kubeProxy).toBe('1.29');
    expect(applied.topology.nodes[0]!.sysctls).toEqual({ 'net.netfilter.nf_conntrack_tcp_be_liberal': 1 });
    expect(race.topology.kubeProxy).toBe('1.15'); // the scenario itself is untouched
  });
});
