// Fault-only runs for the gate's tests: a baseline phase and a faulted phase of probes and checks.
import type { ProbeResult, ScenarioResult } from '../../../src/engine/run/results.ts';
import type { CheckResult } from '../../../src/observe/expect/run-checks.ts';
import type { Outcome } from '../../../src/model/outcome.ts';
import type { CheckSpec, Scenario } from '../../../src/model/scenario-schema.ts';
import { checkSpec } from './fake-lab.ts';
import { check, phase, probe, scenarioResult } from './results.ts';

/** A probe that observed `observed`, matching its expectation or not. */
export const saw = (id: string, observed: Outcome, matched: boolean, over: Partial<ProbeResult> = {}): ProbeResult =>
  probe({
    id,
    observed,
    matched,
    summary: `${id} = ${observed}`,
    ...(matched ? {} : { mismatch: `${id} did not match (${observed})` }),
    ...over,
  });

export const read = (id: string, matched: boolean, over: Partial<CheckResult> = {}): CheckResult =>
  check({ id, matched, expected: `${id} bound`, observed: `${id} read`, ...over });

export const run = (
  baseline: { probes?: ProbeResult[]; checks?: CheckResult[] },
  faulted: { probes?: ProbeResult[]; checks?: CheckResult[] },
  over: Partial<ScenarioResult> = {},
): ScenarioResult =>
  scenarioResult({
    phases: [phase({ name: 'baseline', ...baseline }), phase({ name: 'faulted', ...faulted })],
    addresses: { 'pod/web': '10.244.1.3' },
    ...over,
  });

export const counter = (id: string, over: Partial<CheckSpec> = {}) =>
  checkSpec({ id, counter: 'DROP (\\d+)', expect: { delta: { min: 1 } }, ...over });

/**
 * sym: ok -> timeout, a real fix makes it ok again (the symptom). ctl: ok throughout (a control).
 * Checks: `drops` (the symptom's mechanism), `ran` (control: true), `seen` (as in the baseline: a control).
 */
export const SCENARIO = {
  id: 's',
  purpose: 'reproduce',
  baseline: { expect: { sym: 'ok', ctl: 'ok' }, checks: [counter('seen', { cmd: 'conntrack -S' })] },
  fault: {
    expect: { sym: 'timeout', ctl: { outcome: 'ok' } },
    checks: [counter('drops'), counter('ran', { control: true, cmd: 'x' }), counter('seen', { cmd: 'conntrack -S' })],
  },
  fixes: [
    { name: 'fix', expect: { sym: 'ok', ctl: 'ok' }, checks: [] },
    { name: 'not-a-fix', control: 'negative', expect: { sym: 'reset' }, checks: [] },
  ],
} as unknown as Scenario;

export const BASELINE_OK = { probes: [saw('sym', 'ok', true), saw('ctl', 'ok', true)], checks: [read('seen', true)] };
export const CONTROLS_HELD = [read('ran', true), read('seen', true)];
