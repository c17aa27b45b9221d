// src/engine/mutate/mutate-scenario.ts, mutateScenario: fault-removed and fix-removed, each in a lab of its
// own with the original's history, and the assertions each must make fail on its own (needs-fault,
// needs-fix); an original that did not pass. The labs are stand-ins (fake-lab.ts): no root, no namespaces.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as engine from '../../../src/engine/run/run-scenario.ts';
import { HarnessError } from '../../../src/model/errors.ts';
import {
  mutateScenario,
  plannedMutants,
  reportedMoves,
  type MutantResult,
} from '../../../src/engine/mutate/mutate-scenario.ts';
import type { ClusterProvider } from '../../../src/contract/provider.ts';
import type { Scenario } from '../../../src/model/scenario-schema.ts';
import { aborted, fakeLab, SCENARIO, type Decide, type FakeLab } from './fake-lab.ts';
import { check, phase, probe, scenarioResult } from './results.ts';

vi.mock('../../../src/engine/run/run-scenario.ts', async (importOriginal) => ({
  ...(await importOriginal<typeof engine>()),
  runLab: vi.fn(),
  runScenario: vi.fn(),
}));

const provider = {} as ClusterProvider;
const signal = new AbortController().signal;
const loaded = { file: 'race.yaml', scenario: SCENARIO };
const passed = scenarioResult({
  id: 'race',
  phases: [phase({ probes: [probe({ observed: 'timeout', summary: 'c -> web = timeout' })] })],
});

/** The removed phase as a good scenario shows it: the symptom's probe and checks fail, the rest holds. */
const symptomGone = {
  status: 'failed' as const,
  probes: [
    probe({ id: 'p', matched: false, summary: 'c -> web = ok', mismatch: 'expected timeout, observed ok' }),
    probe({ id: 'q', summary: 'c -> db = ok' }),
  ],
  checks: [
    check({ id: 'drops', matched: false, expected: 'delta >= 1', observed: 'delta 0 (3 -> 3)', value: 0 }),
    check({ id: 'ran', value: 4 }),
    check({
      id: 'no-rst',
      matched: false,
      expected: 'lines matching /RST/ = 0',
      observed: '1 matching line(s)',
      value: 1,
    }),
  ],
};
const fixGone = (name: string) => ({
  status: 'failed' as const,
  probes: [
    probe({
      id: 'p',
      matched: false,
      summary: `${name}: c -> web = timeout`,
      mismatch: 'expected ok, observed timeout',
    }),
  ],
  checks: [
    check({
      id: 'rule',
      matched: false,
      expected: 'lines matching /fixed/ = 1',
      observed: '0 matching line(s)',
      value: 0,
    }),
  ],
});
const removed: Decide = (p) =>
  p.variant === 'fault-removed' ? symptomGone : p.variant.startsWith('fix-removed:') ? fixGone(p.variant) : {};

let lab: FakeLab;
function useLab(
  decide: Decide,
  comesUp?: (label: string) => Error | undefined,
  tearsDown?: (label: string) => Error | undefined,
) {
  lab = fakeLab(decide, comesUp, tearsDown);
  vi.mocked(engine.runLab).mockImplementation(lab.runLab);
}
const judged = (ms: MutantResult[], prefix = '') =>
  ms.filter((m) => m.mutation.startsWith(prefix)).map((m) => [m.mutation, m.status, m.reason]);

beforeEach(() => {
  vi.mocked(engine.runLab).mockReset();
  vi.mocked(engine.runScenario).mockReset();
});

it('plannedMutants: every mutant mutate judges, by name', () => {
  expect(plannedMutants(SCENARIO)).toEqual([
    'outcome-swapped:p',
    'outcome-swapped:q',
    'fault-removed',
    'needs-fault:p',
    'needs-fault:check/drops',
    'needs-fault:check/no-rst',
    'control-holds:fault/ran',
    'fix-removed:first',
    'needs-fix:first/p',
    'needs-fix:first/check/rule',
    'fix-removed:second',
    'needs-fix:second/p',
    'absence-matches:fault/no-rst',
  ]);
});

it("a measurement's probes are its load: only its checks must depend on the steps", () => {
  const measure = { ...SCENARIO, purpose: 'measure', fixes: [] } as unknown as Scenario;
  expect(plannedMutants(measure).filter((m) => m.startsWith('needs-'))).toEqual([
    'needs-fault:check/drops',
    'needs-fault:check/no-rst',
  ]);
});

describe('the original run', () => {
  it('one that did not pass: every planned mutant is not judged, with why; no lab is started', async () => {
    useLab(removed);
    const failed = scenarioResult({
      id: 'race',
      verdict: 'failed',
      phases: [phase({ probes: [probe({ matched: false, mismatch: 'expected timeout, observed ok\n  detail' })] })],
    });
    const seen: MutantResult[] = [];
    const r = await mutateScenario(loaded, { provider, signal, original: failed, onMutant: (m) => seen.push(m) });
    expect(r.scenario).toBe('race');
    expect(r.originalFailure).toBe('fix/faulted/p: expected timeout, observed ok\n  detail');
    expect(r.mutants.map((m) => m.mutation)).toEqual(plannedMutants(SCENARIO));
    expect(
      r.mutants.every(
        (m) =>
          m.status === 'not-judged' &&
          !m.killed &&
          m.reason === 'not judged: the scenario itself did not pass (fix/faulted/p: expected timeout, observed ok)',
      ),
    ).toBe(true);
    expect(seen).toEqual(r.mutants);
    expect(lab.labs).toEqual([]);
  });

  it('skipped: its skip reason; otherwise its verdict', async () => {
    useLab(removed);
    expect(
      (
        await mutateScenario(loaded, {
          provider,
          signal,
          original: scenarioResult({ verdict: 'skipped', skipReason: 'needs Docker' }),
        })
      ).originalFailure,
    ).toBe('needs Docker');
    expect(
      (await mutateScenario(loaded, { provider, signal, original: scenarioResult({ verdict: 'errored' }) }))
        .originalFailure,
    ).toBe('errored');
  });

  it('a measurement that held is judged like a pass', async () => {
    useLab(removed);
    const r = await mutateScenario(loaded, { provider, signal, original: { ...passed, verdict: 'measured' } });
    expect(r.originalFailure).toBeUndefined();
    expect(r.mutants.map((m) => m.mutation)).toEqual(plannedMutants(SCENARIO));
  });

  it('without one given, the scenario is run first, quietly, with the same provider and signal', async () => {
    useLab(removed);
    vi.mocked(engine.runScenario).mockResolvedValue(passed);
    const r = await mutateScenario(loaded, { provider, signal });
    const [what, options] = vi.mocked(engine.runScenario).mock.calls[0]!;
    expect(what).toBe(loaded);
    expect(options).toMatchObject({ provider, signal });
    expect(options.emit({ kind: 'scenario-start', id: 'race', title: 't' })).toBeUndefined();
    expect(r.mutants[0]).toMatchObject({ mutation: 'outcome-swapped:p', status: 'killed' });
  });
});

describe('each removal in a lab of its own', () => {
  it('with the history the original has: baseline, then the fault when a fix is removed', async () => {
    useLab(removed);
    await mutateScenario(loaded, { provider, signal, original: passed });
    expect(lab.labs).toEqual([
      { label: 'fault-removed', plan: ['baseline:mutants:0 steps', 'faulted:fault-removed:0 steps'] },
      {
        label: 'fix-removed:first',
        plan: ['baseline:mutants:0 steps', 'faulted:mutants:1 steps', 'fixed:fix-removed:first:0 steps'],
      },
      {
        label: 'fix-removed:second',
        plan: ['baseline:mutants:0 steps', 'faulted:mutants:1 steps', 'fixed:fix-removed:second:0 steps'],
      },
    ]);
  });

  it('a history phase that did not hold is run again once in a fresh lab, and the retry is counted', async () => {
    // the first fix-removed:first lab loses its faulted history phase (a race under load); the second holds
    let lost = false;
    useLab((p, label) => {
      if (label === 'fix-removed:first' && p.name === 'faulted' && !lost) {
        lost = true;
        return { status: 'failed', probes: [probe({ matched: false, mismatch: 'expected timeout, observed ok' })] };
      }
      return removed(p, label);
    });
    const r = await mutateScenario(loaded, { provider, signal, original: passed });
    expect(lab.labs.map((l) => l.label)).toEqual([
      'fault-removed',
      'fix-removed:first',
      'fix-removed:first',
      'fix-removed:second',
    ]);
    expect(r.retries).toEqual([
      {
        scenario: 'race',
        lab: 'fix-removed:first',
        first: expect.stringMatching(/^not judged: its mutants\/faulted did not hold/),
        judged: true,
      },
    ]);
    expect(r.mutants.find((m) => m.mutation === 'fix-removed:first')?.status).toBe('killed');
  });

  it('a stepless phase keeps what it expects and checks; the lab runs quietly with the provider and signal', async () => {
    useLab(removed);
    await mutateScenario(loaded, { provider, signal, original: passed });
    expect(
      lab.given.map((g) => g.specs.map((s) => [Object.keys(s.expect).join(','), s.checks.map((c) => c.id).join(',')])),
    ).toEqual([
      [
        ['p,q', ''],
        ['p,q', 'drops,ran,no-rst'],
      ],
      [
        ['p,q', ''],
        ['p,q', 'drops,ran,no-rst'],
        ['p', 'rule'],
      ],
      [
        ['p,q', ''],
        ['p,q', 'drops,ran,no-rst'],
        ['p,q', ''],
      ],
    ]);
    expect(lab.given[0]!.options).toMatchObject({ provider, signal });
    expect(lab.given[0]!.options.emit({ kind: 'scenario-start', id: 'race', title: 't' })).toBeUndefined();
  });

  it('killed by the first failure (first line); each assertion that differs is judged on its own', async () => {
    useLab(removed);
    const seen: string[] = [];
    const r = await mutateScenario(loaded, {
      provider,
      signal,
      original: passed,
      onMutant: (m) => seen.push(m.mutation),
    });
    expect(
      judged(r.mutants).filter(([m]) => !String(m).startsWith('outcome') && !String(m).startsWith('absence')),
    ).toEqual([
      ['fault-removed', 'killed', 'fault-removed/faulted/p: expected timeout, observed ok'],
      ['needs-fault:p', 'killed', 'without the fault: c -> web = ok'],
      ['needs-fault:check/drops', 'killed', 'without the fault: expected delta >= 1, observed delta 0 (3 -> 3)'],
      [
        'needs-fault:check/no-rst',
        'killed',
        'without the fault: expected lines matching /RST/ = 0, observed 1 matching line(s)',
      ],
      [
        'control-holds:fault/ran',
        'killed',
        'holds without the fault too, as a control does: expected delta >= 1, observed delta 1 (0 -> 1)',
      ],
      ['fix-removed:first', 'killed', 'fix-removed:first/fixed/p: expected ok, observed timeout'],
      ['needs-fix:first/p', 'killed', 'without the fix: fix-removed:first: c -> web = timeout'],
      [
        'needs-fix:first/check/rule',
        'killed',
        'without the fix: expected lines matching /fixed/ = 1, observed 0 matching line(s)',
      ],
      ['fix-removed:second', 'killed', 'fix-removed:second/fixed/p: expected ok, observed timeout'],
      ['needs-fix:second/p', 'killed', 'without the fix: fix-removed:second: c -> web = timeout'],
    ]);
    expect(seen).toEqual(plannedMutants(SCENARIO));
  });

  it('a control that fails without the fault carried the symptom: it survives, and is told to be asserted', async () => {
    useLab((p, label) =>
      p.variant === 'fault-removed'
        ? {
            ...symptomGone,
            checks: [
              ...symptomGone.checks.filter((c) => c.id !== 'ran'),
              check({ id: 'ran', matched: false, expected: 'delta >= 1', observed: 'delta 0 (3 -> 3)', value: 0 }),
            ],
          }
        : removed(p, label),
    );
    const r = await mutateScenario(loaded, { provider, signal, original: passed });
    expect(judged(r.mutants, 'control-holds')).toEqual([
      [
        'control-holds:fault/ran',
        'survived',
        'control check ran fails without the fault (expected delta >= 1, observed delta 0 (3 -> 3)): it carries the symptom, so assert it (drop `control: true`)',
      ],
    ]);
  });

  it('an assertion that still holds without the steps survives; a check is told it may be a control', async () => {
    useLab((p) =>
      p.variant === 'fault-removed'
        ? {
            ...symptomGone,
            checks: [
              check({ id: 'drops', observed: 'delta 2 (3 -> 5)', value: 2 }),
              check({ id: 'no-rst', expected: 'lines matching /RST/ = 0', observed: '0 matching line(s)', value: 0 }),
            ],
          }
        : removed(p, ''),
    );
    const r = await mutateScenario(loaded, { provider, signal, original: passed });
    expect(judged(r.mutants, 'needs-fault')).toEqual([
      ['needs-fault:p', 'killed', 'without the fault: c -> web = ok'],
      [
        'needs-fault:check/drops',
        'survived',
        'still holds without the fault: expected delta >= 1, observed delta 2 (3 -> 5); it does not depend on it (mark it `control: true` if it proves something else, such as that the probes ran)',
      ],
      [
        'needs-fault:check/no-rst',
        'survived',
        'still holds without the fault: expected lines matching /RST/ = 0, observed 0 matching line(s); it does not depend on it (mark it `control: true` if it proves something else, such as that the probes ran)',
      ],
    ]);
    useLab((p) =>
      p.variant === 'fault-removed' ? { probes: [probe({ id: 'p', summary: 'c -> web = timeout' })] } : removed(p, ''),
    );
    expect(
      judged((await mutateScenario(loaded, { provider, signal, original: passed })).mutants, 'needs-fault:p'),
    ).toEqual([
      ['needs-fault:p', 'survived', 'still holds without the fault: c -> web = timeout; it does not depend on it'],
    ]);
  });

  it('a removal under which everything held survives, with what its probes saw', async () => {
    useLab((p) =>
      p.variant === 'fault-removed'
        ? { probes: [probe({ id: 'p', summary: 'c -> web = timeout' }), probe({ id: 'q', summary: 'c -> db = ok' })] }
        : p.variant === 'fix-removed:second'
          ? {}
          : removed(p, ''),
    );
    const r = await mutateScenario(loaded, { provider, signal, original: passed });
    expect(judged(r.mutants, 'fault-removed')).toEqual([
      ['fault-removed', 'survived', 'every expectation and check still held: c -> web = timeout; c -> db = ok'],
    ]);
    expect(judged(r.mutants, 'fix-removed:second')).toEqual([
      ['fix-removed:second', 'survived', 'every expectation and check still held: no probes'],
    ]);
  });

  it('an assertion with no result in the removed phase is not judged', async () => {
    useLab((p) =>
      p.variant === 'fault-removed'
        ? {
            status: 'failed',
            probes: [probe({ id: 'q' })],
            checks: [check({ id: 'drops', matched: false, observed: 'delta 0 (3 -> 3)' })],
          }
        : removed(p, ''),
    );
    const r = await mutateScenario(loaded, { provider, signal, original: passed });
    expect(judged(r.mutants, 'needs-fault')).toEqual([
      ['needs-fault:p', 'not-judged', 'not judged: probe p has no result in the phase'],
      ['needs-fault:check/drops', 'killed', 'without the fault: expected delta >= 1, observed delta 0 (3 -> 3)'],
      ['needs-fault:check/no-rst', 'not-judged', 'not judged: check no-rst has no result in the phase'],
    ]);
  });

  it('the removed phase errored: its assertions share the verdict of the whole, saying so', async () => {
    useLab((p) =>
      p.variant === 'fault-removed'
        ? new HarnessError('STEP_FAILED', 'background step failed\n  output')
        : removed(p, ''),
    );
    const r = await mutateScenario(loaded, { provider, signal, original: passed });
    expect(judged(r.mutants, 'needs-fault')[0]).toEqual([
      'needs-fault:p',
      'killed',
      'the phase errored: fault-removed/faulted errored: background step failed',
    ]);
    expect(judged(r.mutants, 'fault-removed')).toEqual([
      ['fault-removed', 'killed', 'fault-removed/faulted errored: background step failed'],
    ]);
    // a phase's error does not stop the other removals
    expect(lab.labs.map((l) => l.label)).toEqual(['fault-removed', 'fix-removed:first', 'fix-removed:second']);
  });

  it('a lab that never came up judges nothing: the removal and its assertions are not judged, with the first line of why', async () => {
    useLab(removed, (label) => (label === 'fault-removed' ? new Error('netns add failed\n  details') : undefined));
    const r = await mutateScenario(loaded, { provider, signal, original: passed });
    expect(judged(r.mutants, 'fault-removed').concat(judged(r.mutants, 'needs-fault'))).toEqual([
      ['fault-removed', 'not-judged', 'not judged: netns add failed'],
      ['needs-fault:p', 'not-judged', 'not judged: netns add failed'],
      ['needs-fault:check/drops', 'not-judged', 'not judged: netns add failed'],
      ['needs-fault:check/no-rst', 'not-judged', 'not judged: netns add failed'],
    ]);
    expect(judged(r.mutants, 'fix-removed:first')[0]![1]).toBe('killed');
  });

  it('a lab that failed outside its phases (its teardown) judges nothing either', async () => {
    useLab(removed, undefined, (label) => (label === 'fix-removed:second' ? new Error('teardown failed') : undefined));
    const r = await mutateScenario(loaded, { provider, signal, original: passed });
    expect(judged(r.mutants, 'fix-removed:second').concat(judged(r.mutants, 'needs-fix:second'))).toEqual([
      ['fix-removed:second', 'not-judged', 'not judged: teardown failed'],
      ['needs-fix:second/p', 'not-judged', 'not judged: teardown failed'],
    ]);
  });
});

describe('an abort (Ctrl-C) stops mutate', () => {
  it("in a removal's lab", async () => {
    useLab(() => aborted());
    await expect(mutateScenario(loaded, { provider, signal, original: passed })).rejects.toMatchObject({
      code: 'ABORTED',
    });
  });

  it('another error of the harness does not', async () => {
    useLab(() => new HarnessError('LAB_FAILED', 'x'));
    const r = await mutateScenario(loaded, { provider, signal, original: passed });
    expect(r.mutants).toHaveLength(plannedMutants(SCENARIO).length);
  });
});

describe('a number the fault only reports', () => {
  const reporting = {
    ...SCENARIO,
    fault: { ...SCENARIO.fault, checks: [{ id: 'r', on: 'node/n', cmd: 'x', counter: '(\\d+)', report: true }] },
  } as unknown as Scenario;
  const faulted = (variant: string, value: number) =>
    phase({ name: 'faulted', variant, checks: [check({ id: 'r', value, reported: true })] });
  it('is a symptom to assert when it is there with the fault and not without it', () => {
    const [m] = reportedMoves(reporting, [faulted('a', 2), faulted('b', 3)], [faulted('fault-removed', 0)]);
    expect(m).toMatchObject({
      mutation: 'reported-moves:fault/r',
      status: 'survived',
      reason: 'reported, but it carries the fault: 2, 3 with it, 0 without it; assert it',
    });
  });
  it('is only shown when it does not come and go with the fault', () => {
    expect(reportedMoves(reporting, [faulted('a', 1)], [faulted('fault-removed', 1)])[0]?.status).toBe('killed');
    expect(reportedMoves(reporting, [faulted('a', 0)], [faulted('fault-removed', 0)])[0]?.status).toBe('killed');
    expect(reportedMoves(reporting, [faulted('a', 2)], [])[0]?.status).toBe('not-judged');
  });

  // the phases as runs record them: the original's labs (one per fix), then the removals' labs in order
  const baseline = (variant: string) => phase({ name: 'baseline', variant });
  const originalRun = (...values: number[]) =>
    values.flatMap((v, i) => [baseline(`f${i}`), faulted(`f${i}`, v), phase({ name: 'fixed', variant: `f${i}` })]);
  const removalRuns = (bare: number, withFault: number) => [
    baseline('mutants'),
    faulted('fault-removed', bare),
    baseline('mutants'),
    faulted('mutants', withFault),
    phase({ name: 'fixed', variant: 'fix-removed:first' }),
  ];

  it("is read from every faulted phase of the original and from the fault-removed lab's faulted phase alone", () => {
    expect(reportedMoves(reporting, originalRun(2, 3), removalRuns(0, 2))[0]).toMatchObject({
      status: 'survived',
      reason: 'reported, but it carries the fault: 2, 3 with it, 0 without it; assert it',
    });
  });

  it("is not judged when the fault-removed lab ended before its faulted phase (another lab's faulted phase is no stand-in)", () => {
    const brokenEarly = [
      phase({ name: 'baseline', variant: 'mutants', status: 'errored' }),
      ...removalRuns(0, 0).slice(2),
    ];
    expect(reportedMoves(reporting, originalRun(2), brokenEarly)[0]).toMatchObject({
      status: 'not-judged',
      reason: 'not judged: r was not read in every run',
    });
  });

  it("is not judged when a run did not read it, found by its id among the phase's checks", () => {
    const other = check({ id: 'other', value: 0 });
    const unread = (variant: string) => phase({ name: 'faulted', variant, checks: [other] });
    const withR = (variant: string, value: number) =>
      phase({ name: 'faulted', variant, checks: [other, check({ id: 'r', value, reported: true })] });
    expect(reportedMoves(reporting, [withR('a', 2)], [unread('fault-removed')])[0]).toMatchObject({
      status: 'not-judged',
      reason: 'not judged: r was not read in every run',
    });
    expect(reportedMoves(reporting, [withR('a', 2), unread('b')], [withR('fault-removed', 0)])[0]?.status).toBe(
      'not-judged',
    );
    expect(reportedMoves(reporting, [withR('a', 2), withR('b', 3)], [withR('fault-removed', 0)])[0]?.status).toBe(
      'survived',
    );
  });

  it('moves only when every run with the fault differs from the run without it: there where absent, absent where there', () => {
    expect(reportedMoves(reporting, originalRun(2, 0), removalRuns(0, 2))[0]).toMatchObject({
      status: 'killed',
      reason: 'it does not come and go with the fault (2, 0 with it, 0 without)',
    });
    expect(reportedMoves(reporting, originalRun(0, 2), removalRuns(3, 2))[0]?.status).toBe('killed');
    expect(reportedMoves(reporting, originalRun(0, 0), removalRuns(3, 0))[0]).toMatchObject({
      status: 'survived',
      reason: 'reported, but it carries the fault: 0, 0 with it, 3 without it; assert it',
    });
  });

  it('is planned for each reported check of the fault, and for no other', () => {
    const planned = plannedMutants({
      ...reporting,
      fault: {
        ...reporting.fault,
        checks: [
          ...reporting.fault.checks,
          { id: 'asserted', on: 'node/n', cmd: 'x', counter: '(\\d+)', expect: { delta: 1 } },
        ],
      },
    } as unknown as Scenario);
    expect(planned.filter((m) => m.startsWith('reported-moves:'))).toEqual(['reported-moves:fault/r']);
  });
});

it("a fix's control check is its own mutant, named by the fix", () => {
  expect(plannedMutants(SCENARIO).filter((m) => m.startsWith('control-holds:'))).toEqual(['control-holds:fault/ran']);
  const controlled = {
    ...SCENARIO,
    fixes: [{ ...SCENARIO.fixes[0]!, checks: [{ ...SCENARIO.fault.checks[1]!, id: 'still-up' }] }],
  } as Scenario;
  expect(plannedMutants(controlled).filter((m) => m.startsWith('control-holds:'))).toEqual([
    'control-holds:fault/ran',
    'control-holds:fix:first/still-up',
  ]);
});
