// src/engine/gate/susceptibility.ts, assess: a profile's fault-only run read as susceptible (the symptom and
// its mechanism showed), immune (only from health: symptom probes healthy, controls held), broken
// (neither), unjudged (could not tell) or not-applicable.
import { describe, expect, it } from 'vitest';
import { assess } from '../../../src/engine/gate/susceptibility.ts';
import type { Scenario } from '../../../src/model/scenario-schema.ts';
import { BASELINE_OK, CONTROLS_HELD, counter, read, run, saw, SCENARIO } from './gate-results.ts';

const symptom = {
  probes: [saw('sym', 'timeout', true), saw('ctl', 'ok', true)],
  checks: [read('drops', true), ...CONTROLS_HELD],
};

describe('before the faulted phase is read', () => {
  it('skipped: not applicable, with its reason', () => {
    expect(assess(run({}, {}, { verdict: 'skipped', skipReason: 'needs Docker' }), SCENARIO)).toEqual({
      verdict: 'not-applicable',
      reason: 'needs Docker',
      decidedBy: [],
    });
    expect(assess(run({}, {}, { verdict: 'skipped' }), SCENARIO)).toEqual({
      verdict: 'not-applicable',
      reason: 'skipped',
      decidedBy: [],
    });
  });

  it('an error: unjudged, first line of it', () => {
    expect(
      assess(
        run(BASELINE_OK, symptom, { error: { code: 'STEP_FAILED', message: 'step failed on node/a\n  exit 1' } }),
        SCENARIO,
      ),
    ).toEqual({ verdict: 'unjudged', reason: 'errored: step failed on node/a', decidedBy: [] });
  });

  it('no baseline or no faulted phase: unjudged', () => {
    const onlyBaseline = run(BASELINE_OK, symptom);
    onlyBaseline.phases.pop();
    expect(assess(onlyBaseline, SCENARIO)).toEqual({
      verdict: 'unjudged',
      reason: 'the run did not reach the faulted phase',
      decidedBy: [],
    });
    const onlyFaulted = run(BASELINE_OK, symptom);
    onlyFaulted.phases.shift();
    expect(assess(onlyFaulted, SCENARIO).verdict).toBe('unjudged');
  });

  it('a baseline that did not hold (probe or check): unjudged, naming each miss', () => {
    const bad = {
      probes: [saw('sym', 'timeout', false), saw('ctl', 'ok', true), saw('x', 'reset', false, { mismatch: undefined })],
      checks: [read('seen', false), read('other', true)],
    };
    expect(assess(run(bad, symptom), SCENARIO)).toEqual({
      verdict: 'unjudged',
      reason:
        'the healthy baseline did not hold: sym: sym did not match (timeout); x: x = reset; check seen: expected seen bound, observed seen read',
      decidedBy: ['sym', 'x', 'check seen'],
    });
  });
});

describe('reproduce: susceptible', () => {
  it('every symptom probe showed it and every symptom check held', () => {
    expect(assess(run(BASELINE_OK, symptom), SCENARIO)).toEqual({
      verdict: 'susceptible',
      reason: 'sym: sym = timeout',
      decidedBy: ['sym'],
    });
  });

  it('a reported number decides nothing, even unreadable', () => {
    const reported = read('rate', false, { reported: true, unreadable: true });
    expect(assess(run(BASELINE_OK, { ...symptom, checks: [...symptom.checks, reported] }), SCENARIO).verdict).toBe(
      'susceptible',
    );
  });
});

describe('reproduce: immune, only from health', () => {
  it('every symptom probe observed what the baseline expects, and the controls held', () => {
    const healthy = {
      probes: [saw('sym', 'ok', false), saw('ctl', 'ok', true)],
      checks: [read('drops', false), ...CONTROLS_HELD],
    };
    expect(assess(run(BASELINE_OK, healthy), SCENARIO)).toEqual({
      verdict: 'immune',
      reason: 'sym: sym = ok (healthy)',
      decidedBy: ['sym'],
    });
  });

  it('healthy symptom probes decide it whatever the symptom checks could read', () => {
    const healthy = {
      probes: [saw('sym', 'ok', false), saw('ctl', 'ok', true)],
      checks: [read('drops', false, { unreadable: true }), ...CONTROLS_HELD],
    };
    expect(assess(run(BASELINE_OK, healthy), SCENARIO).verdict).toBe('immune');
  });

  it('health is also what a real fix expects, not a negative control', () => {
    const scenario = {
      ...SCENARIO,
      fixes: [
        { name: 'fix', expect: { sym: 'refused' }, checks: [] },
        { name: 'ctl', control: 'negative', expect: { sym: 'reset' }, checks: [] },
      ],
    } as unknown as Scenario;
    const refused = { probes: [saw('sym', 'refused', false), saw('ctl', 'ok', true)], checks: CONTROLS_HELD };
    expect(assess(run(BASELINE_OK, refused), scenario)).toMatchObject({ verdict: 'immune', decidedBy: ['sym'] });
    const reset = { probes: [saw('sym', 'reset', false), saw('ctl', 'ok', true)], checks: CONTROLS_HELD };
    expect(assess(run(BASELINE_OK, reset), scenario)).toMatchObject({
      verdict: 'broken',
      reason: 'neither the symptom nor health: sym: sym did not match (reset)',
    });
  });

  it('health is judged with every field of the healthy expectation, references resolved from the run', () => {
    const scenario = {
      ...SCENARIO,
      baseline: { ...SCENARIO.baseline, expect: { sym: { outcome: 'ok', source: 'pod/web' }, ctl: 'ok' } },
      fixes: [],
    } as unknown as Scenario;
    const fromPod = {
      probes: [saw('sym', 'ok', false, { detail: { source: '10.244.1.3:8080' } }), saw('ctl', 'ok', true)],
      checks: CONTROLS_HELD,
    };
    expect(assess(run(BASELINE_OK, fromPod), scenario).verdict).toBe('immune');
    const fromVip = {
      probes: [saw('sym', 'ok', false, { detail: { source: '10.96.0.20:80' } }), saw('ctl', 'ok', true)],
      checks: CONTROLS_HELD,
    };
    expect(assess(run(BASELINE_OK, fromVip), scenario).verdict).toBe('broken');
    // a reference the run recorded no address for is compared as written
    const unrecorded = run(BASELINE_OK, fromPod, { addresses: undefined });
    expect(assess(unrecorded, scenario).verdict).toBe('broken');
  });
});

describe('reproduce: broken, never immune', () => {
  it('a control probe that did not hold, whatever the symptom did', () => {
    const r = run(BASELINE_OK, {
      probes: [saw('sym', 'ok', false), saw('ctl', 'timeout', false)],
      checks: CONTROLS_HELD,
    });
    expect(assess(r, SCENARIO)).toEqual({
      verdict: 'broken',
      reason: 'a control broke: ctl: ctl did not match (timeout)',
      decidedBy: ['ctl'],
    });
  });

  it("a control check (marked, or the same as the baseline's) that did not hold", () => {
    const marked = run(BASELINE_OK, {
      ...symptom,
      checks: [read('drops', true), read('ran', false), read('seen', true)],
    });
    expect(assess(marked, SCENARIO)).toEqual({
      verdict: 'broken',
      reason: 'a control broke: check ran: expected ran bound, observed ran read',
      decidedBy: ['check ran'],
    });
    const same = run(BASELINE_OK, {
      ...symptom,
      checks: [read('drops', true), read('ran', true), read('seen', false)],
    });
    expect(assess(same, SCENARIO)).toMatchObject({ verdict: 'broken', decidedBy: ['check seen'] });
  });

  it('a symptom probe with a third outcome (neither the symptom nor health)', () => {
    const r = run(BASELINE_OK, { probes: [saw('sym', 'error', false), saw('ctl', 'ok', true)], checks: CONTROLS_HELD });
    expect(assess(r, SCENARIO)).toEqual({
      verdict: 'broken',
      reason: 'neither the symptom nor health: sym: sym did not match (error)',
      decidedBy: ['sym'],
    });
  });

  it('the symptom without its mechanism (a symptom check that did not hold)', () => {
    const r = run(BASELINE_OK, { ...symptom, checks: [read('drops', false), ...CONTROLS_HELD] });
    expect(assess(r, SCENARIO)).toEqual({
      verdict: 'broken',
      reason: 'the symptom showed without its mechanism: check drops: expected drops bound, observed drops read',
      decidedBy: ['check drops'],
    });
  });

  it('the symptom in one probe, health in another', () => {
    const scenario = {
      ...SCENARIO,
      baseline: { ...SCENARIO.baseline, expect: { sym: 'ok', sym2: 'ok', ctl: 'ok' } },
      fault: { ...SCENARIO.fault, expect: { sym: 'timeout', sym2: 'timeout', ctl: 'ok' } },
    } as unknown as Scenario;
    const r = run(BASELINE_OK, {
      probes: [saw('sym', 'timeout', true), saw('sym2', 'ok', false), saw('ctl', 'ok', true)],
      checks: [read('drops', true), ...CONTROLS_HELD],
    });
    expect(assess(r, scenario)).toEqual({
      verdict: 'broken',
      reason: 'the symptom showed only in part: sym: sym = timeout; healthy: sym2',
      decidedBy: ['sym', 'sym2'],
    });
  });
});

describe('reproduce: unjudged when the evidence that decides cannot be read', () => {
  it('a control check', () => {
    const r = run(BASELINE_OK, {
      ...symptom,
      checks: [
        read('drops', true),
        read('ran', false, { unreadable: true, observed: 'cannot be read' }),
        read('seen', true),
      ],
    });
    expect(assess(r, SCENARIO)).toEqual({
      verdict: 'unjudged',
      reason: "the faulted phase's evidence could not be read under this profile: check ran: cannot be read",
      decidedBy: ['check ran'],
    });
  });

  it('a symptom check, once the symptom probes are not all healthy', () => {
    const r = run(BASELINE_OK, {
      ...symptom,
      checks: [read('drops', false, { unreadable: true, observed: 'no line matched' }), ...CONTROLS_HELD],
    });
    expect(assess(r, SCENARIO)).toEqual({
      verdict: 'unjudged',
      reason: "the faulted phase's evidence could not be read under this profile: check drops: no line matched",
      decidedBy: ['check drops'],
    });
  });
});

describe('reproduce: a symptom in the checks alone', () => {
  const scenario = {
    ...SCENARIO,
    fault: {
      ...SCENARIO.fault,
      expect: { sym: 'ok', ctl: 'ok' },
      checks: [counter('drops'), counter('more', { cmd: 'y' })],
    },
  } as unknown as Scenario;
  const probes = [saw('sym', 'ok', true), saw('ctl', 'ok', true)];

  it('every symptom check held: susceptible', () => {
    expect(assess(run(BASELINE_OK, { probes, checks: [read('drops', true), read('more', true)] }), scenario)).toEqual({
      verdict: 'susceptible',
      reason: 'check drops: drops read; check more: more read',
      decidedBy: ['check drops', 'check more'],
    });
  });

  it('none held: immune', () => {
    expect(assess(run(BASELINE_OK, { probes, checks: [read('drops', false), read('more', false)] }), scenario)).toEqual(
      {
        verdict: 'immune',
        reason:
          'check drops: expected drops bound, observed drops read; check more: expected more bound, observed more read',
        decidedBy: ['check drops', 'check more'],
      },
    );
  });

  it('some held: broken', () => {
    expect(assess(run(BASELINE_OK, { probes, checks: [read('drops', true), read('more', false)] }), scenario)).toEqual({
      verdict: 'broken',
      reason:
        'only part of the symptom showed: check drops: drops read; not check more: expected more bound, observed more read',
      decidedBy: ['check drops', 'check more'],
    });
  });

  it('a check result no spec names counts as a symptom', () => {
    expect(
      assess(
        run(BASELINE_OK, { probes, checks: [read('drops', true), read('more', true), read('extra', false)] }),
        scenario,
      ).verdict,
    ).toBe('broken');
  });
});

describe('preserve: traffic must survive the change', () => {
  const scenario = {
    ...SCENARIO,
    purpose: 'preserve',
    fault: {
      ...SCENARIO.fault,
      expect: { sym: 'ok', ctl: 'ok' },
      checks: [counter('restarted'), counter('ran', { control: true, cmd: 'x' })],
    },
  } as unknown as Scenario;
  const survived = [saw('sym', 'ok', true), saw('ctl', 'ok', true)];

  it('the change happened and every probe held: immune', () => {
    expect(
      assess(run(BASELINE_OK, { probes: survived, checks: [read('restarted', true), read('ran', true)] }), scenario),
    ).toEqual({
      verdict: 'immune',
      reason: 'traffic survived the change: sym: sym = ok; ctl: ctl = ok',
      decidedBy: ['sym', 'ctl'],
    });
  });

  it('controls are listed before the other probes', () => {
    const withSymptom = {
      ...scenario,
      fault: { ...scenario.fault, expect: { sym: 'reset', ctl: 'ok' } },
    } as unknown as Scenario;
    expect(
      assess(
        run(BASELINE_OK, {
          probes: [saw('sym', 'reset', true), saw('ctl', 'ok', true)],
          checks: [read('restarted', true), read('ran', true)],
        }),
        withSymptom,
      ).decidedBy,
    ).toEqual(['ctl', 'sym']);
  });

  it('a probe that broke: susceptible', () => {
    const broke = [saw('sym', 'timeout', false), saw('ctl', 'ok', true)];
    expect(
      assess(run(BASELINE_OK, { probes: broke, checks: [read('restarted', true), read('ran', true)] }), scenario),
    ).toEqual({
      verdict: 'susceptible',
      reason: 'traffic did not survive the change: sym: sym did not match (timeout)',
      decidedBy: ['sym'],
    });
  });

  it('the change did not happen: unjudged', () => {
    expect(
      assess(run(BASELINE_OK, { probes: survived, checks: [read('restarted', false), read('ran', true)] }), scenario),
    ).toEqual({
      verdict: 'unjudged',
      reason: 'the change did not happen: check restarted: expected restarted bound, observed restarted read',
      decidedBy: ['check restarted'],
    });
  });

  it('a control check that did not hold: broken', () => {
    expect(
      assess(run(BASELINE_OK, { probes: survived, checks: [read('restarted', true), read('ran', false)] }), scenario),
    ).toMatchObject({
      verdict: 'broken',
      reason: 'a control broke: check ran: expected ran bound, observed ran read',
      decidedBy: ['check ran'],
    });
  });

  it('a check that cannot be read, proof or control: unjudged', () => {
    expect(
      assess(
        run(BASELINE_OK, {
          probes: survived,
          checks: [read('restarted', true), read('ran', false, { unreadable: true })],
        }),
        scenario,
      ),
    ).toMatchObject({ verdict: 'unjudged', decidedBy: ['check ran'] });
    expect(
      assess(
        run(BASELINE_OK, {
          probes: survived,
          checks: [read('restarted', false, { unreadable: true }), read('ran', true)],
        }),
        scenario,
      ),
    ).toMatchObject({ verdict: 'unjudged', decidedBy: ['check restarted'] });
  });
});
