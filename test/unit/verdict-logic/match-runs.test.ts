// src/observe/expect/match-expectation.ts, a repeated probe: how many runs must meet the expectation
// (every run; an exact or open `count`; a `rate`) and what the others may be (`otherwise`).
import { describe, expect, it } from 'vitest';
import { matchExpectation } from '../../../src/observe/expect/match-expectation.ts';
import type { ExpectedSpec } from '../../../src/model/scenario-schema.ts';
import type { Outcome } from '../../../src/model/outcome.ts';
import { repeated } from './results.ts';

const match = (expected: ExpectedSpec, outcomes: Outcome[]) =>
  matchExpectation(expected, repeated(outcomes), (ref) => (ref === 'pod/web' ? '10.244.1.3' : ref));
const resets = (n: number, of = 4): Outcome[] => [
  ...Array<Outcome>(n).fill('reset'),
  ...Array<Outcome>(of - n).fill('ok'),
];
const holds = (expected: ExpectedSpec, outcomes: Outcome[]) => match(expected, outcomes).matched;

describe('without count or rate, every run', () => {
  it('holds when every run meets the expectation', () => {
    expect(match('ok', resets(0))).toEqual({ matched: true, expected: 'ok in every run (4)' });
  });

  it('one run that does not is enough to fail, and the mismatch counts them', () => {
    expect(match('ok', resets(1))).toEqual({
      matched: false,
      expected: 'ok in every run (4)',
      mismatch: '3 of 4 runs matched (ok); observed 4 runs',
    });
  });

  it('a run matches on every field, not on its outcome alone', () => {
    const runs = repeated(['ok', 'ok'], { source: '10.244.1.3:80' });
    expect(matchExpectation({ outcome: 'ok', source: 'pod/web' }, runs, () => '10.244.1.3').matched).toBe(true);
    expect(matchExpectation({ outcome: 'ok', source: 'pod/web' }, runs, () => '10.244.1.9')).toMatchObject({
      matched: false,
      expected: 'ok, from pod/web (10.244.1.9) in every run (2)',
    });
  });
});

describe('count', () => {
  it('an exact count holds for that number of matching runs, not one more or one less', () => {
    expect(match({ outcome: 'reset', count: 2 }, resets(2))).toEqual({
      matched: true,
      expected: 'reset in 2 of 4 runs',
    });
    expect(match({ outcome: 'reset', count: 2 }, resets(1))).toEqual({
      matched: false,
      expected: 'reset in 2 of 4 runs',
      mismatch: '1 of 4 runs matched (reset); observed 4 runs',
    });
    expect(holds({ outcome: 'reset', count: 2 }, resets(3))).toBe(false);
  });

  it('count 0: no run may match', () => {
    expect(match({ outcome: 'reset', count: 0 }, resets(0))).toEqual({
      matched: true,
      expected: 'reset in 0 of 4 runs',
    });
    expect(holds({ outcome: 'reset', count: 0 }, resets(1))).toBe(false);
  });

  it('a range holds at both of its ends and nowhere outside', () => {
    const range = { outcome: 'reset', count: { min: 1, max: 3 } } as const;
    expect(match(range, resets(1))).toEqual({ matched: true, expected: 'reset in 1..3 of 4 runs' });
    expect(holds(range, resets(3))).toBe(true);
    expect(holds(range, resets(0))).toBe(false);
    expect(holds(range, resets(4))).toBe(false);
  });

  it('a range with equal ends reads as one number', () => {
    expect(match({ outcome: 'reset', count: { min: 2, max: 2 } }, resets(2)).expected).toBe('reset in 2 of 4 runs');
  });

  it('an open range: a minimum alone, a maximum alone', () => {
    expect(match({ outcome: 'reset', count: { min: 2 } }, resets(2))).toEqual({
      matched: true,
      expected: 'reset in >= 2 of 4 runs',
    });
    expect(holds({ outcome: 'reset', count: { min: 2 } }, resets(4))).toBe(true);
    expect(holds({ outcome: 'reset', count: { min: 2 } }, resets(1))).toBe(false);
    expect(match({ outcome: 'reset', count: { max: 1 } }, resets(1))).toEqual({
      matched: true,
      expected: 'reset in <= 1 of 4 runs',
    });
    expect(holds({ outcome: 'reset', count: { max: 1 } }, resets(0))).toBe(true);
    expect(holds({ outcome: 'reset', count: { max: 1 } }, resets(2))).toBe(false);
  });

  it('an empty range (which validation keeps out of scenarios) says so, and holds for any count', () => {
    expect(match({ outcome: 'reset', count: {} }, resets(2))).toEqual({
      matched: true,
      expected: 'reset in any number of 4 runs',
    });
  });
});

describe('rate', () => {
  it('a minimum rate holds at it and above, and the mismatch gives the rate seen', () => {
    expect(match({ outcome: 'reset', rate: { min: 0.5 } }, resets(2))).toEqual({
      matched: true,
      expected: 'reset in >= 50% of 4 runs',
    });
    expect(holds({ outcome: 'reset', rate: { min: 0.5 } }, resets(4))).toBe(true);
    expect(match({ outcome: 'reset', rate: { min: 0.5 } }, resets(1))).toEqual({
      matched: false,
      expected: 'reset in >= 50% of 4 runs',
      mismatch: '25.0% of 4 runs matched (reset); observed 4 runs',
    });
  });

  it('a maximum rate holds at it and below', () => {
    expect(match({ outcome: 'reset', rate: { max: 0.25 } }, resets(1))).toEqual({
      matched: true,
      expected: 'reset in <= 25% of 4 runs',
    });
    expect(holds({ outcome: 'reset', rate: { max: 0.25 } }, resets(0))).toBe(true);
    expect(holds({ outcome: 'reset', rate: { max: 0.25 } }, resets(2))).toBe(false);
  });

  it('a rate range', () => {
    const range = { outcome: 'reset', rate: { min: 0.25, max: 0.75 } } as const;
    expect(match(range, resets(3))).toEqual({ matched: true, expected: 'reset in 25%..75% of 4 runs' });
    expect(holds(range, resets(0))).toBe(false);
    expect(holds(range, resets(4))).toBe(false);
  });

  it('a rate is not "every run": a minimum below 1 accepts other runs', () => {
    expect(holds({ outcome: 'reset', rate: { min: 0.75 } }, resets(3))).toBe(true);
  });
});

describe('otherwise', () => {
  it('every run that does not match must have the otherwise outcome', () => {
    expect(match({ outcome: 'reset', count: { min: 1 }, otherwise: 'ok' }, resets(1))).toEqual({
      matched: true,
      expected: 'reset in >= 1 of 4 runs, otherwise ok',
    });
  });

  it('a run with a third outcome fails it, named by its summary', () => {
    expect(
      match({ outcome: 'reset', count: { min: 1 }, otherwise: 'ok' }, ['reset', 'ok', 'timeout', 'error']),
    ).toEqual({
      matched: false,
      expected: 'reset in >= 1 of 4 runs, otherwise ok',
      mismatch: '2 run(s) neither reset nor ok, e.g. run timeout; observed 4 runs',
    });
  });

  it('without otherwise, the other runs may be anything', () => {
    expect(holds({ outcome: 'reset', count: { min: 1 } }, ['reset', 'timeout', 'error', 'ok'])).toBe(true);
  });

  it('the count is judged before otherwise', () => {
    expect(match({ outcome: 'reset', count: 3, otherwise: 'ok' }, ['reset', 'timeout', 'ok', 'ok']).mismatch).toBe(
      '1 of 4 runs matched (reset); observed 4 runs',
    );
  });
});

it('a single observation (no runs in its detail) is judged as one run', () => {
  expect(
    matchExpectation(
      { outcome: 'reset', count: 2 } as ExpectedSpec,
      { outcome: 'reset', summary: 's', durationMs: 1, detail: { runs: [] } },
      (r) => r,
    ),
  ).toEqual({ matched: true, expected: 'reset' });
});

it('sameBackend names runs that no pod named as such among the pods that served', () => {
  const runs = repeated(['ok', 'ok']);
  (runs.detail.runs as { servedBy?: string }[])[0]!.servedBy = 'web-1';
  expect(matchExpectation({ outcome: 'ok', sameBackend: true }, runs, (r) => r)).toEqual({
    matched: false,
    expected: 'ok in every run (2), all served by one pod',
    mismatch: 'the runs were served by 2 pods (web-1, nobody named), not one; observed 2 runs',
  });
});
