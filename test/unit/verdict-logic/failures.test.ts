// src/engine/run/failures.ts: the lines that make a run exit 1.
import { describe, expect, it } from 'vitest';
import { phaseFailures, runFailures, scenarioFailures } from '../../../src/engine/run/failures.ts';
import { check, phase, probe, scenarioResult } from './results.ts';

describe('phaseFailures', () => {
  it('a phase where everything held has no failure line', () => {
    expect(phaseFailures(phase({ probes: [probe()], checks: [check()] }))).toEqual([]);
  });

  it('a probe that did not match is named with its phase and its mismatch', () => {
    const p = phase({
      variant: 'fix-a',
      name: 'fixed',
      probes: [
        probe({ id: 'ok-probe' }),
        probe({ id: 'web', matched: false, mismatch: 'expected ok, observed timeout: no answer' }),
      ],
    });
    expect(phaseFailures(p)).toEqual(['fix-a/fixed/web: expected ok, observed timeout: no answer']);
  });

  it('a probe without a mismatch text falls back to its summary', () => {
    expect(phaseFailures(phase({ probes: [probe({ matched: false, summary: 'client -> web = reset' })] }))).toEqual([
      'fix/faulted/p: client -> web = reset',
    ]);
  });

  it('a failed check is a failure of its phase, with what it expected and observed', () => {
    const p = phase({
      checks: [
        check({ id: 'ok-check' }),
        check({ id: 'drops', matched: false, expected: 'delta >= 1', observed: 'delta 0 (4 -> 4)' }),
      ],
    });
    expect(phaseFailures(p)).toEqual(['fix/faulted/check drops: expected delta >= 1, observed delta 0 (4 -> 4)']);
  });

  it('an errored phase lists its error first, then what did not hold', () => {
    const p = phase({
      status: 'errored',
      error: { code: 'STEP_FAILED', message: 'step failed on node/a' },
      probes: [probe({ matched: false, mismatch: 'm' })],
      checks: [check({ matched: false })],
    });
    expect(phaseFailures(p)).toEqual([
      'fix/faulted errored: step failed on node/a',
      'fix/faulted/p: m',
      'fix/faulted/check c: expected delta >= 1, observed delta 1 (0 -> 1)',
    ]);
  });

  it('an error is listed only when the phase errored, and an errored phase without one lists nothing for it', () => {
    expect(phaseFailures(phase({ status: 'failed', error: { code: 'X', message: 'stale' } }))).toEqual([]);
    expect(phaseFailures(phase({ status: 'errored' }))).toEqual([]);
  });
});

describe('scenarioFailures', () => {
  it('an error outside every phase (provisioning) is listed with its code', () => {
    const r = scenarioResult({
      verdict: 'errored',
      error: { code: 'LAB_FAILED', message: 'netns add failed' },
      phases: [phase({ probes: [probe()] })],
    });
    expect(scenarioFailures(r)).toEqual(['LAB_FAILED: netns add failed']);
  });

  it("a phase's own error is listed once, with its phase, not again as the scenario's", () => {
    const error = { code: 'STEP_FAILED', message: 'step failed on node/a' };
    const r = scenarioResult({
      verdict: 'errored',
      error,
      phases: [phase({ name: 'baseline' }), phase({ status: 'errored', error })],
    });
    expect(scenarioFailures(r)).toEqual(['fix/faulted errored: step failed on node/a']);
  });

  it('phases are listed in order, each with its failures', () => {
    const r = scenarioResult({
      phases: [
        phase({ name: 'baseline', probes: [probe({ id: 'a', matched: false, mismatch: 'one' })] }),
        phase({ name: 'fixed', checks: [check({ id: 'b', matched: false, observed: 'two' })] }),
      ],
    });
    expect(scenarioFailures(r)).toEqual([
      'fix/baseline/a: one',
      'fix/fixed/check b: expected delta >= 1, observed two',
    ]);
  });

  it('a passing scenario has none', () => {
    expect(scenarioFailures(scenarioResult({ phases: [phase({ probes: [probe()] })] }))).toEqual([]);
  });
});

describe('runFailures', () => {
  it("prefixes each scenario's failure lines with its id", () => {
    const bad = scenarioResult({ id: 'bad', phases: [phase({ probes: [probe({ matched: false, mismatch: 'm' })] })] });
    const good = scenarioResult({ id: 'good', phases: [phase({ probes: [probe()] })] });
    const errored = scenarioResult({ id: 'down', error: { code: 'LAB_FAILED', message: 'no lab' } });
    expect(
      runFailures({
        version: 1,
        provider: 'netns',
        durationMs: 1,
        summary: { passed: 1, measured: 0, failed: 1, errored: 1, skipped: 0 },
        scenarios: [bad, good, errored],
      }),
    ).toEqual(['bad/fix/faulted/p: m', 'down/LAB_FAILED: no lab']);
  });
});
