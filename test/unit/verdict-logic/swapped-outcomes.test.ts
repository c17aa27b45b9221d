// src/engine/mutate/mutate-scenario.ts, swappedOutcomes and killRate: mutants judged on the original
// run's observations, without a lab.
import { describe, expect, it } from 'vitest';
import { killRate, swappedOutcomes, type MutantStatus } from '../../../src/engine/mutate/mutate-scenario.ts';
import type { ScenarioResult } from '../../../src/engine/run/results.ts';
import type { Scenario } from '../../../src/model/scenario-schema.ts';
import { phase, probe, scenarioResult } from './results.ts';

const scenario = (expect: Record<string, unknown>) => ({ id: 's', fault: { expect } }) as unknown as Scenario;
const observed = (o: Partial<Parameters<typeof probe>[0]>) => probe({ id: 'p', ...o });
const thrown = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
};
const original = (...phases: ScenarioResult['phases']) =>
  scenarioResult({ phases, addresses: { 'pod/web': '10.244.1.3' } });

describe('swappedOutcomes', () => {
  it('killed when every other outcome fails on what the faulted phase observed; the example is the first', () => {
    const run = original(
      phase({ variant: 'fix', probes: [observed({ observed: 'timeout', summary: 'c -> web = timeout' })] }),
    );
    expect(swappedOutcomes(scenario({ p: 'timeout' }), run)).toEqual([
      {
        scenario: 's',
        mutation: 'outcome-swapped:p',
        status: 'killed',
        killed: true,
        reason: 'all 7 other outcomes fail, e.g. as ok: fix: expected ok, observed timeout: c -> web = timeout',
      },
    ]);
  });

  it('survives with the outcomes that still hold, in their order (a vacuous expectation)', () => {
    const runs = Array.from({ length: 4 }, () => ({ outcome: 'ok', summary: 'ok', durationMs: 1 }));
    const seen = observed({
      observed: 'ok',
      summary: '4 ok',
      detail: { runs, distribution: { runs: 4, outcomes: { ok: 4 }, servedBy: {} } },
    });
    const [m] = swappedOutcomes(
      scenario({ p: { outcome: 'reset', count: { min: 0 }, otherwise: 'ok' } }),
      original(phase({ probes: [seen] })),
    );
    expect(m).toEqual({
      scenario: 's',
      mutation: 'outcome-swapped:p',
      status: 'survived',
      killed: false,
      reason:
        'still holds with the outcome swapped to ok, timeout, refused, unexpected-source, wrong-answer, unreachable, error',
    });
  });

  it('a swap that holds in one variant and fails in another is killed by the other', () => {
    // swapped to timeout, variant b still holds; variant a does not
    const run = original(
      phase({ variant: 'a', probes: [observed({ observed: 'reset', summary: 'reset' })] }),
      phase({ variant: 'b', probes: [observed({ observed: 'timeout', summary: 'timeout' })] }),
    );
    expect(swappedOutcomes(scenario({ p: 'reset' }), run)[0]).toMatchObject({
      killed: true,
      reason: 'all 7 other outcomes fail, e.g. as ok: a: expected ok, observed reset: reset',
    });
    // with one variant, the swap to its own outcome holds
    expect(swappedOutcomes(scenario({ p: 'reset' }), original(run.phases[1]!))[0]).toMatchObject({
      killed: false,
      reason: 'still holds with the outcome swapped to timeout',
    });
  });

  it('only faulted phases are read: a baseline observation judges no swap', () => {
    const run = original(
      phase({ name: 'baseline', variant: 'base', probes: [observed({ observed: 'ok' })] }),
      phase({ variant: 'f', probes: [] }),
    );
    expect(swappedOutcomes(scenario({ p: 'timeout' }), run)[0]).toMatchObject({
      killed: false,
      reason:
        'still holds with the outcome swapped to ok, reset, refused, unexpected-source, wrong-answer, unreachable, error',
    });
  });

  it('only faulted phases are read', () => {
    const run = original(
      phase({ name: 'baseline', variant: 'base', probes: [observed({ observed: 'ok' })] }),
      phase({ variant: 'f', probes: [observed({ observed: 'timeout', summary: 't' })] }),
    );
    expect(swappedOutcomes(scenario({ p: 'timeout' }), run)[0]).toMatchObject({
      killed: true,
      reason: 'all 7 other outcomes fail, e.g. as ok: f: expected ok, observed timeout: t',
    });
  });

  it('one mutant per faulted expectation, each judged on its own probe', () => {
    const run = original(
      phase({ probes: [observed({ id: 'p', observed: 'timeout' }), observed({ id: 'q', observed: 'reset' })] }),
    );
    expect(
      swappedOutcomes(scenario({ p: 'timeout', q: { outcome: 'reset' } }), run).map((m) => [m.mutation, m.killed]),
    ).toEqual([
      ['outcome-swapped:p', true],
      ['outcome-swapped:q', true],
    ]);
  });

  it('a probe the faulted phases never ran holds under every swap', () => {
    const [m] = swappedOutcomes(scenario({ p: 'timeout' }), original(phase({ probes: [] })));
    expect(m).toMatchObject({
      killed: false,
      reason:
        'still holds with the outcome swapped to ok, reset, refused, unexpected-source, wrong-answer, unreachable, error',
    });
  });

  it('references are resolved with the addresses the original run recorded; one it did not record is an error', () => {
    const run = original(
      phase({
        probes: [observed({ observed: 'unexpected-source', summary: 'u', detail: { source: '10.244.1.3:8080' } })],
      }),
    );
    expect(swappedOutcomes(scenario({ p: { outcome: 'unexpected-source', source: 'pod/web' } }), run)[0]).toMatchObject(
      {
        killed: true,
        reason: 'all 7 other outcomes fail, e.g. as ok: fix: expected ok, observed unexpected-source: u',
      },
    );
    expect(() => swappedOutcomes(scenario({ p: { outcome: 'unexpected-source', source: 'pod/other' } }), run)).toThrow(
      'the original run recorded no address for pod/other',
    );
    expect(
      thrown(() => swappedOutcomes(scenario({ p: { outcome: 'unexpected-source', source: 'pod/other' } }), run)),
    ).toMatchObject({ name: 'HarnessError', code: 'LAB_FAILED' });
    expect(() =>
      swappedOutcomes(scenario({ p: { outcome: 'unexpected-source', source: 'pod/web' } }), {
        ...run,
        addresses: undefined,
      }),
    ).toThrow('the original run recorded no address for pod/web');
  });
});

describe('killRate', () => {
  const m = (status: MutantStatus) => ({
    scenario: 's',
    mutation: 'x',
    status,
    killed: status === 'killed',
    reason: '',
  });
  it('the share of judged mutants killed; 1 when none was judged', () => {
    expect(killRate([m('killed'), m('survived'), m('survived'), m('survived')])).toBe(0.25);
    expect(killRate([m('killed')])).toBe(1);
    expect(killRate([m('survived')])).toBe(0);
    expect(killRate([])).toBe(1);
  });

  it('mutants that could not be judged count neither way', () => {
    expect(killRate([m('killed'), m('survived'), m('not-judged'), m('not-judged')])).toBe(0.5);
    expect(killRate([m('not-judged')])).toBe(1);
  });
});
