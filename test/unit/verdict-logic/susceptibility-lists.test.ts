// src/engine/gate/susceptibility.ts: every probe or check behind a verdict is named, in order, in its
// reason and in decidedBy; roles are read with several checks and probes of each kind.
import { describe, expect, it } from 'vitest';
import { assess } from '../../../src/engine/gate/susceptibility.ts';
import type { Scenario } from '../../../src/model/scenario-schema.ts';
import { counter, read, run, saw } from './gate-results.ts';

/** Two symptom probes (a, b: ok -> timeout), two controls (c, d: ok), two symptom checks, two control checks. */
const SCENARIO = {
  id: 's',
  purpose: 'reproduce',
  baseline: {
    expect: { a: 'ok', b: 'ok', c: 'ok', d: 'ok' },
    checks: [counter('other', { cmd: 'z' }), counter('same', { cmd: 'conntrack -S' })],
  },
  fault: {
    expect: { a: 'timeout', b: 'timeout', c: 'ok', d: 'ok' },
    checks: [
      counter('m1'),
      counter('m2', { cmd: 'y' }),
      counter('ran', { control: true, cmd: 'x' }),
      counter('same', { cmd: 'conntrack -S' }),
    ],
  },
  fixes: [{ name: 'fix', expect: { a: 'ok', b: 'ok', c: 'ok', d: 'ok' }, checks: [] }],
} as unknown as Scenario;
const baseline = {
  probes: [saw('a', 'ok', true), saw('b', 'ok', true), saw('c', 'ok', true), saw('d', 'ok', true)],
  checks: [read('other', true), read('same', true)],
};
const controls = [saw('c', 'ok', true), saw('d', 'ok', true)];
const held = [read('m1', true), read('m2', true), read('ran', true), read('same', true)];
const assessed = (probes: ReturnType<typeof saw>[], checks = held) =>
  assess(run(baseline, { probes, checks }), SCENARIO);

describe('reproduce', () => {
  it('susceptible names every symptom probe', () => {
    expect(assessed([saw('a', 'timeout', true), saw('b', 'timeout', true), ...controls])).toEqual({
      verdict: 'susceptible',
      reason: 'a: a = timeout; b: b = timeout',
      decidedBy: ['a', 'b'],
    });
  });

  it('immune names every healthy symptom probe', () => {
    expect(assessed([saw('a', 'ok', false), saw('b', 'ok', false), ...controls])).toEqual({
      verdict: 'immune',
      reason: 'a: a = ok (healthy); b: b = ok (healthy)',
      decidedBy: ['a', 'b'],
    });
  });

  it('every control probe that broke', () => {
    expect(
      assessed([
        saw('a', 'timeout', true),
        saw('b', 'timeout', true),
        saw('c', 'reset', false),
        saw('d', 'error', false),
      ]),
    ).toEqual({
      verdict: 'broken',
      reason: 'a control broke: c: c did not match (reset); d: d did not match (error)',
      decidedBy: ['c', 'd'],
    });
  });

  it("every control check that broke; a check equal to one of the baseline's is a control", () => {
    expect(
      assessed(
        [saw('a', 'timeout', true), saw('b', 'timeout', true), ...controls],
        [read('m1', true), read('m2', true), read('ran', false), read('same', false)],
      ),
    ).toEqual({
      verdict: 'broken',
      reason:
        'a control broke: check ran: expected ran bound, observed ran read; check same: expected same bound, observed same read',
      decidedBy: ['check ran', 'check same'],
    });
  });

  it('every unreadable check', () => {
    const unread = [
      read('m1', false, { unreadable: true, observed: 'gone' }),
      read('m2', false, { unreadable: true, observed: 'gone too' }),
      read('ran', true),
      read('same', true),
    ];
    expect(assessed([saw('a', 'timeout', true), saw('b', 'timeout', true), ...controls], unread)).toEqual({
      verdict: 'unjudged',
      reason: "the faulted phase's evidence could not be read under this profile: check m1: gone; check m2: gone too",
      decidedBy: ['check m1', 'check m2'],
    });
  });

  it('the symptom without part of its mechanism: only the checks that did not hold', () => {
    expect(
      assessed(
        [saw('a', 'timeout', true), saw('b', 'timeout', true), ...controls],
        [read('m1', true), read('m2', false), read('ran', true), read('same', true)],
      ),
    ).toEqual({
      verdict: 'broken',
      reason: 'the symptom showed without its mechanism: check m2: expected m2 bound, observed m2 read',
      decidedBy: ['check m2'],
    });
  });

  it('the symptom without its mechanism: every check that did not hold', () => {
    expect(
      assessed(
        [saw('a', 'timeout', true), saw('b', 'timeout', true), ...controls],
        [read('m1', false), read('m2', false), read('ran', true), read('same', true)],
      ),
    ).toEqual({
      verdict: 'broken',
      reason:
        'the symptom showed without its mechanism: check m1: expected m1 bound, observed m1 read; check m2: expected m2 bound, observed m2 read',
      decidedBy: ['check m1', 'check m2'],
    });
  });

  it('a symptom in the checks alone that showed in part: what held and what did not', () => {
    const checksOnly = {
      ...SCENARIO,
      fault: {
        ...SCENARIO.fault,
        expect: { a: 'ok', b: 'ok', c: 'ok', d: 'ok' },
        checks: [...SCENARIO.fault.checks, counter('m3', { cmd: 'w' }), counter('m4', { cmd: 'v' })],
      },
    } as unknown as Scenario;
    const probes = [saw('a', 'ok', true), saw('b', 'ok', true), ...controls];
    const checks = [
      read('m1', true),
      read('m2', true),
      read('m3', false),
      read('m4', false),
      read('ran', true),
      read('same', true),
    ];
    expect(assess(run(baseline, { probes, checks }), checksOnly)).toEqual({
      verdict: 'broken',
      reason:
        'only part of the symptom showed: check m1: m1 read; check m2: m2 read; not check m3: expected m3 bound, observed m3 read; check m4: expected m4 bound, observed m4 read',
      decidedBy: ['check m1', 'check m2', 'check m3', 'check m4'],
    });
  });

  it('every probe with a third outcome', () => {
    expect(assessed([saw('a', 'error', false), saw('b', 'refused', false), ...controls])).toEqual({
      verdict: 'broken',
      reason: 'neither the symptom nor health: a: a did not match (error); b: b did not match (refused)',
      decidedBy: ['a', 'b'],
    });
  });

  it('the symptom in part: what showed and what was healthy', () => {
    const scenario = {
      ...SCENARIO,
      baseline: { ...SCENARIO.baseline, expect: { ...SCENARIO.baseline.expect, e: 'ok' } },
      fault: { ...SCENARIO.fault, expect: { ...SCENARIO.fault.expect, e: 'timeout' } },
    } as unknown as Scenario;
    const probes = [saw('a', 'timeout', true), saw('b', 'timeout', true), saw('e', 'ok', false), ...controls];
    expect(assess(run(baseline, { probes, checks: held }), scenario)).toEqual({
      verdict: 'broken',
      reason: 'the symptom showed only in part: a: a = timeout; b: b = timeout; healthy: e',
      decidedBy: ['a', 'b', 'e'],
    });
    const twoHealthy = [saw('a', 'timeout', true), saw('b', 'ok', false), saw('e', 'ok', false), ...controls];
    expect(assess(run(baseline, { probes: twoHealthy, checks: held }), scenario).reason).toBe(
      'the symptom showed only in part: a: a = timeout; healthy: b, e',
    );
  });

  it('a faulted probe that neither the baseline nor a fix expects is a symptom, never healthy', () => {
    const scenario = {
      ...SCENARIO,
      fault: { ...SCENARIO.fault, expect: { ...SCENARIO.fault.expect, only: 'reset' } },
    } as unknown as Scenario;
    const probes = [saw('a', 'timeout', true), saw('b', 'timeout', true), saw('only', 'reset', true), ...controls];
    expect(assess(run(baseline, { probes, checks: held }), scenario)).toMatchObject({
      verdict: 'susceptible',
      decidedBy: ['a', 'b', 'only'],
    });
  });
});

describe('preserve', () => {
  const preserve = {
    ...SCENARIO,
    purpose: 'preserve',
    fault: { ...SCENARIO.fault, expect: { a: 'ok', b: 'ok', c: 'ok', d: 'ok' } },
  } as unknown as Scenario;
  const survived = [saw('a', 'ok', true), saw('b', 'ok', true), ...controls];

  it('every probe that broke', () => {
    const broke = [saw('a', 'timeout', false), saw('b', 'reset', false), ...controls];
    expect(assess(run(baseline, { probes: broke, checks: held }), preserve)).toEqual({
      verdict: 'susceptible',
      reason: 'traffic did not survive the change: a: a did not match (timeout); b: b did not match (reset)',
      decidedBy: ['a', 'b'],
    });
  });

  it('every proof of the change that did not hold', () => {
    expect(
      assess(
        run(baseline, {
          probes: survived,
          checks: [read('m1', false), read('m2', false), read('ran', true), read('same', true)],
        }),
        preserve,
      ),
    ).toEqual({
      verdict: 'unjudged',
      reason:
        'the change did not happen: check m1: expected m1 bound, observed m1 read; check m2: expected m2 bound, observed m2 read',
      decidedBy: ['check m1', 'check m2'],
    });
  });

  it('every control check that broke', () => {
    expect(
      assess(
        run(baseline, {
          probes: survived,
          checks: [read('m1', true), read('m2', true), read('ran', false), read('same', false)],
        }),
        preserve,
      ),
    ).toMatchObject({
      verdict: 'broken',
      reason:
        'a control broke: check ran: expected ran bound, observed ran read; check same: expected same bound, observed same read',
    });
  });
});
