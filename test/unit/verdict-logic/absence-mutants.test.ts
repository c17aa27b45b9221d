// src/engine/mutate/mutate-scenario.ts, absence-matches: an absence (count 0, delta 0, max 0) proves
// something only where its pattern matches in some phase of some run, the original's or a removal's.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as engine from '../../../src/engine/run/run-scenario.ts';
import { mutateScenario, plannedMutants, type MutantResult } from '../../../src/engine/mutate/mutate-scenario.ts';
import type { ClusterProvider } from '../../../src/contract/provider.ts';
import type { PhaseResult } from '../../../src/engine/run/results.ts';
import type { CheckSpec, Scenario } from '../../../src/model/scenario-schema.ts';
import { checkSpec, fakeLab, type Decide } from './fake-lab.ts';
import { check, phase, probe, scenarioResult } from './results.ts';

vi.mock('../../../src/engine/run/run-scenario.ts', async (importOriginal) => ({
  ...(await importOriginal<typeof engine>()),
  runLab: vi.fn(),
  runScenario: vi.fn(),
}));

const RST = checkSpec({ id: 'no-rst', cmd: 'tcpdump -c 10', matches: 'RST', expect: { count: 0 } });
const scenario = (checks: { baseline?: CheckSpec[]; fault?: CheckSpec[]; fix?: CheckSpec[] }) =>
  ({
    id: 's',
    purpose: 'reproduce',
    baseline: { expect: { p: 'ok' }, checks: checks.baseline ?? [] },
    fault: { steps: [{}], expect: { p: 'timeout' }, checks: checks.fault ?? [] },
    fixes: [{ name: 'mend', steps: [{}], expect: { p: 'ok' }, checks: checks.fix ?? [] }],
  }) as unknown as Scenario;

async function absences(s: Scenario, original: PhaseResult[], decide: Decide = () => ({})): Promise<MutantResult[]> {
  vi.mocked(engine.runLab).mockImplementation(fakeLab(decide).runLab);
  const passed = scenarioResult({ phases: [...original, phase({ probes: [probe({ observed: 'timeout' })] })] });
  const r = await mutateScenario(
    { file: 's.yaml', scenario: s },
    { provider: {} as ClusterProvider, signal: new AbortController().signal, original: passed },
  );
  return r.mutants.filter((m) => m.mutation.startsWith('absence-matches'));
}

beforeEach(() => {
  vi.mocked(engine.runLab).mockReset();
});

describe('which checks are absences', () => {
  it('count 0, delta 0 and a maximum of 0; not other bounds, not reported numbers', () => {
    const absent = [
      checkSpec({ id: 'count0', matches: 'a', expect: { count: 0 } }),
      checkSpec({ id: 'delta0', counter: 'b (\\d+)', expect: { delta: 0 } }),
      checkSpec({ id: 'max0', matches: 'c', expect: { count: { max: 0 } } }),
    ];
    const present = [
      checkSpec({ id: 'one', matches: 'd', expect: { count: 1 } }),
      checkSpec({ id: 'upto1', matches: 'e', expect: { count: { min: 0, max: 1 } } }),
      checkSpec({ id: 'rises', counter: 'f (\\d+)', expect: { delta: { min: 1 } } }),
      checkSpec({ id: 'reported', matches: 'g', report: true, expect: undefined }),
    ];
    expect(plannedMutants(scenario({ fault: [...absent, ...present] })).filter((m) => m.startsWith('absence'))).toEqual(
      ['absence-matches:fault/count0', 'absence-matches:fault/delta0', 'absence-matches:fault/max0'],
    );
  });

  it('one mutant per thing read (machine, command, pattern), named where it first appears', () => {
    const again = { ...RST, id: 'still-no-rst' };
    const elsewhere = { ...RST, id: 'no-rst-b', on: 'node/b' };
    const otherPattern = { ...RST, id: 'no-fin', matches: 'FIN' };
    expect(
      plannedMutants(scenario({ baseline: [RST], fault: [again, elsewhere], fix: [otherPattern] })).filter((m) =>
        m.startsWith('absence'),
      ),
    ).toEqual(['absence-matches:baseline/no-rst', 'absence-matches:fault/no-rst-b', 'absence-matches:fix:mend/no-fin']);
  });
});

describe('judged on every phase of every run', () => {
  it('a pattern that never matches proves nothing: survived', async () => {
    const ms = await absences(scenario({ fault: [RST] }), [phase({ checks: [check({ id: 'no-rst', value: 0 })] })]);
    expect(ms).toEqual([
      {
        scenario: 's',
        mutation: 'absence-matches:fault/no-rst',
        status: 'survived',
        killed: false,
        reason: 'this pattern never matches in any phase of any variant (/RST/): its absence proves nothing',
      },
    ]);
  });

  it('a match in the original run kills it, naming where', async () => {
    const original = [
      phase({ name: 'fixed', variant: 'mend', checks: [check({ id: 'no-rst', value: 0 })] }),
      phase({
        name: 'baseline',
        variant: 'mend',
        checks: [check({ id: 'no-rst', value: 3, observed: '3 matching line(s)' })],
      }),
    ];
    const ms = await absences(
      scenario({ baseline: [checkSpec({ ...RST, expect: { count: { min: 1 } } })], fault: [RST] }),
      original,
    );
    expect(ms).toEqual([
      {
        scenario: 's',
        mutation: 'absence-matches:fault/no-rst',
        status: 'killed',
        killed: true,
        reason: '/RST/ matches where the fault or another phase puts it: mend/baseline: 3 matching line(s)',
      },
    ]);
  });

  it("a match in a removal's run kills it too (the fault removed, the absence gone)", async () => {
    const ms = await absences(scenario({ fault: [RST] }), [], (p) =>
      p.variant === 'fault-removed'
        ? { checks: [check({ id: 'no-rst', value: 2, observed: '2 matching line(s)' })] }
        : {},
    );
    expect(ms[0]).toMatchObject({
      status: 'killed',
      reason: '/RST/ matches where the fault or another phase puts it: fault-removed/faulted: 2 matching line(s)',
    });
  });

  it("a fixed phase of the original run reads its fix's checks", async () => {
    const ms = await absences(scenario({ fix: [RST] }), [
      phase({
        name: 'fixed',
        variant: 'mend',
        checks: [check({ id: 'no-rst', value: 4, observed: '4 matching line(s)' })],
      }),
    ]);
    expect(ms[0]).toMatchObject({
      mutation: 'absence-matches:fix:mend/no-rst',
      status: 'killed',
      reason: '/RST/ matches where the fault or another phase puts it: mend/fixed: 4 matching line(s)',
    });
  });

  it("a fix-removed phase reads its fix's checks", async () => {
    const ms = await absences(scenario({ fix: [RST] }), [], (p) =>
      p.variant === 'fix-removed:mend'
        ? { checks: [check({ id: 'no-rst', value: 1, observed: '1 matching line(s)' })] }
        : {},
    );
    expect(ms[0]).toMatchObject({
      mutation: 'absence-matches:fix:mend/no-rst',
      status: 'killed',
      reason: '/RST/ matches where the fault or another phase puts it: fix-removed:mend/fixed: 1 matching line(s)',
    });
  });

  it('a check result of the same name that reads something else, a zero, or no number, does not count', async () => {
    const other = checkSpec({ id: 'no-rst', cmd: 'conntrack -L', matches: 'RST', expect: { count: { min: 1 } } });
    const original = [
      phase({ name: 'baseline', checks: [check({ id: 'no-rst', value: 5 })] }), // the baseline's no-rst reads conntrack
      phase({ name: 'faulted', checks: [check({ id: 'no-rst', value: 0 }), check({ id: 'other', value: 9 })] }),
      phase({ name: 'fixed', variant: 'mend', checks: [check({ id: 'no-rst' })] }),
      phase({ name: 'fixed', variant: 'unknown-fix', checks: [check({ id: 'no-rst', value: 7 })] }),
    ];
    const ms = await absences(scenario({ baseline: [other], fault: [RST], fix: [RST] }), original);
    expect(ms.map((m) => [m.mutation, m.status])).toEqual([['absence-matches:fault/no-rst', 'survived']]);
  });
});
