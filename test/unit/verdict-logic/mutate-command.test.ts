// src/engine/mutate/mutate-command.ts: mutants of several scenarios, originals that failed, the verdict
// of the whole run, its table, line and JSON text.
import { stripVTControlCharacters } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as mutate from '../../../src/engine/mutate/mutate-scenario.ts';
import {
  mutantLine,
  mutateAll,
  mutateJson,
  mutatePassed,
  mutateTable,
  type MutateRun,
} from '../../../src/engine/mutate/mutate-command.ts';
import type { ClusterProvider } from '../../../src/contract/provider.ts';
import type { LoadedScenario } from '../../../src/model/load-scenario.ts';
import { scenarioResult } from './results.ts';

vi.mock('../../../src/engine/mutate/mutate-scenario.ts', async (importOriginal) => ({
  ...(await importOriginal<typeof mutate>()),
  mutateScenario: vi.fn(),
}));

const plain = stripVTControlCharacters;
const m = (scenario: string, mutation: string, status: mutate.MutantStatus, reason = 'r'): mutate.MutantResult => ({
  scenario,
  mutation,
  status,
  killed: status === 'killed',
  reason,
});
const loaded = (id: string) => ({ file: `${id}.yaml`, scenario: { id } }) as unknown as LoadedScenario;
const options = () => ({ provider: {} as ClusterProvider, signal: new AbortController().signal, parallel: 1 });
const run = (over: Partial<MutateRun>): MutateRun => ({
  mutants: [],
  originalFailures: [],
  retries: [],
  killRate: 1,
  durationMs: 0,
  ...over,
});

afterEach(() => {
  vi.mocked(mutate.mutateScenario).mockReset();
});

describe('mutateAll', () => {
  it("every scenario's mutants in the scenarios' order, however they finish, and the kill rate of the judged ones", async () => {
    vi.mocked(mutate.mutateScenario).mockImplementation(async ({ scenario }) => {
      if (scenario.id === 'a') await new Promise((r) => setTimeout(r, 20)); // finishes last
      return scenario.id === 'a'
        ? {
            scenario: 'a',
            mutants: [
              m('a', 'fault-removed', 'killed'),
              m('a', 'fix-removed:x', 'survived'),
              m('a', 'needs-fault:p', 'not-judged'),
            ],
            retries: [],
          }
        : { scenario: 'b', mutants: [m('b', 'fault-removed', 'killed')], retries: [] };
    });
    const provider = {} as ClusterProvider;
    const signal = new AbortController().signal;
    const onMutant = () => {};
    const r = await mutateAll([loaded('a'), loaded('b')], { provider, signal, parallel: 2, onMutant });
    expect(r.mutants.map((x) => `${x.scenario} ${x.mutation}`)).toEqual([
      'a fault-removed',
      'a fix-removed:x',
      'a needs-fault:p',
      'b fault-removed',
    ]);
    expect(r.killRate).toBeCloseTo(2 / 3);
    expect(r.originalFailures).toEqual([]);
    expect(vi.mocked(mutate.mutateScenario).mock.calls[0]![1]).toEqual({
      provider,
      signal,
      onMutant,
      original: undefined,
    });
  });

  it('an original that failed is listed with its reason, its mutants with the others', async () => {
    vi.mocked(mutate.mutateScenario).mockImplementation(async ({ scenario }) =>
      scenario.id === 'a'
        ? {
            scenario: 'a',
            originalFailure: 'fix/faulted/p: expected timeout, observed ok',
            mutants: [m('a', 'fault-removed', 'not-judged')],
            retries: [
              { scenario: 'a', lab: 'fix-removed:x', first: 'not judged: its x/faulted did not hold', judged: false },
            ],
          }
        : { scenario: 'b', mutants: [m('b', 'fault-removed', 'killed')], retries: [] },
    );
    const r = await mutateAll([loaded('a'), loaded('b')], options());
    expect(r.originalFailures).toEqual([{ scenario: 'a', reason: 'fix/faulted/p: expected timeout, observed ok' }]);
    // the lab run again is counted, and the table says so
    expect(r.retries).toEqual([
      { scenario: 'a', lab: 'fix-removed:x', first: 'not judged: its x/faulted did not hold', judged: false },
    ]);
    expect(mutateTable(r)).toContain(
      'retried a fix-removed:x: its x/faulted did not hold; not judged on the retry either',
    );
    expect(mutateTable(r)).toContain('; 1 lab(s) retried');
    expect(mutateTable({ ...r, retries: [{ ...r.retries[0]!, judged: true }] })).toContain(
      'retried a fix-removed:x: its x/faulted did not hold; judged on the retry',
    );
    expect(r.mutants.map((x) => x.status)).toEqual(['not-judged', 'killed']);
    expect(r.killRate).toBe(1);
  });

  it('a run of the unmutated scenario already made is handed on, matched by id', async () => {
    vi.mocked(mutate.mutateScenario).mockImplementation(async ({ scenario }) => ({
      scenario: scenario.id,
      mutants: [],
      retries: [],
    }));
    const b = scenarioResult({ id: 'b' });
    await mutateAll([loaded('a'), loaded('b')], { ...options(), originals: [scenarioResult({ id: 'c' }), b] });
    expect(vi.mocked(mutate.mutateScenario).mock.calls.map(([s, o]) => [s.scenario.id, o.original])).toEqual([
      ['a', undefined],
      ['b', b],
    ]);
  });

  it('scenarios an abort kept from starting are left out', async () => {
    const controller = new AbortController();
    vi.mocked(mutate.mutateScenario).mockImplementation(async ({ scenario }) => {
      controller.abort();
      return { scenario: scenario.id, mutants: [m(scenario.id, 'fault-removed', 'killed')], retries: [] };
    });
    const r = await mutateAll([loaded('a'), loaded('b')], { ...options(), signal: controller.signal });
    expect(r.mutants.map((x) => x.scenario)).toEqual(['a']);
  });

  it('its duration is the time between its start and its end, in whole ms', async () => {
    vi.mocked(mutate.mutateScenario).mockResolvedValue({ scenario: 'a', mutants: [], retries: [] });
    const now = vi.spyOn(performance, 'now').mockReturnValueOnce(1000.2).mockReturnValueOnce(3500.9);
    try {
      expect((await mutateAll([loaded('a')], options())).durationMs).toBe(2501);
    } finally {
      now.mockRestore();
    }
  });

  it('no scenario: no mutant, kill rate 1', async () => {
    expect(await mutateAll([], options())).toMatchObject({ mutants: [], originalFailures: [], killRate: 1 });
  });
});

describe('mutatePassed', () => {
  it('only when every mutant was judged and killed and every original passed', () => {
    expect(mutatePassed(run({ mutants: [m('s', 'a', 'killed'), m('s', 'b', 'killed')] }))).toBe(true);
    expect(mutatePassed(run({}))).toBe(true);
    expect(mutatePassed(run({ mutants: [m('s', 'a', 'killed'), m('s', 'b', 'survived')] }))).toBe(false);
    expect(mutatePassed(run({ mutants: [m('s', 'a', 'killed'), m('s', 'b', 'not-judged')] }))).toBe(false);
    expect(
      mutatePassed(run({ mutants: [m('s', 'a', 'killed')], originalFailures: [{ scenario: 't', reason: 'x' }] })),
    ).toBe(false);
  });
});

describe('mutantLine', () => {
  it('killed, SURVIVED or UNJUDGED, the scenario, the mutation and the reason', () => {
    expect(
      plain(mutantLine(m('race', 'fault-removed', 'killed', 'race/fault-removed/faulted/p: expected timeout'))),
    ).toBe('killed   race fault-removed: race/fault-removed/faulted/p: expected timeout');
    expect(plain(mutantLine(m('race', 'fix-removed:x', 'survived', 'every expectation held')))).toBe(
      'SURVIVED race fix-removed:x: every expectation held',
    );
    expect(plain(mutantLine(m('race', 'needs-fault:p', 'not-judged', 'not judged: lab down')))).toBe(
      'UNJUDGED race needs-fault:p: not judged: lab down',
    );
  });

  it('a reason over 160 characters is cut to 157 and an ellipsis', () => {
    expect(plain(mutantLine(m('s', 'o', 'killed', 'x'.repeat(161))))).toBe(`killed   s o: ${'x'.repeat(157)}...`);
    expect(plain(mutantLine(m('s', 'o', 'killed', 'y'.repeat(160))))).toBe(`killed   s o: ${'y'.repeat(160)}`);
  });
});

describe('mutateTable', () => {
  it('one row per mutant, columns as wide as the longest name (8 at least), then the kill rate of the judged', () => {
    const r = run({
      mutants: [
        m('cilium-forward-race', 'fault-removed', 'killed'),
        m('s', 'outcome-swapped:p', 'survived'),
        m('s', 'needs-fault:q', 'not-judged'),
      ],
      killRate: 0.5,
      durationMs: 12_345,
    });
    expect(plain(mutateTable(r)).split('\n')).toEqual([
      `  result   ${'scenario'.padEnd(19)} ${'mutation'.padEnd(17)}`,
      `  killed   cilium-forward-race ${'fault-removed'.padEnd(17)}`,
      `  SURVIVED ${'s'.padEnd(19)} outcome-swapped:p`,
      `  UNJUDGED ${'s'.padEnd(19)} ${'needs-fault:q'.padEnd(17)}`,
      'kill rate 50.0%: 1 of 2 judged mutants killed, 1 not judged (12.3 s)',
      '',
    ]);
  });

  it('an original that failed is its own line, first line of its reason; without unjudged mutants the count says nothing of them', () => {
    const r = run({
      mutants: [m('s', 'o', 'killed')],
      originalFailures: [{ scenario: 'race', reason: 'fix/faulted/p: expected timeout\nmore' }],
    });
    expect(plain(mutateTable(r)).split('\n')).toEqual([
      '  result   scenario mutation',
      '  killed   s        o       ',
      'original FAILED race: fix/faulted/p: expected timeout (its mutants are not judged)',
      'kill rate 100.0%: 1 of 1 judged mutants killed (0.0 s)',
      '',
    ]);
  });
});

describe('mutateJson', () => {
  it('version 1, the mutants, the failed originals, the retried labs, the kill rate and the duration, indented, ending in a newline', () => {
    const text = mutateJson(
      run({
        mutants: [m('s', 'fault-removed', 'killed')],
        originalFailures: [{ scenario: 't', reason: 'x' }],
        killRate: 1,
        durationMs: 5,
      }),
    );
    expect(JSON.parse(text)).toEqual({
      version: 1,
      mutants: [{ scenario: 's', mutation: 'fault-removed', status: 'killed', killed: true, reason: 'r' }],
      originalFailures: [{ scenario: 't', reason: 'x' }],
      retries: [],
      killRate: 1,
      durationMs: 5,
    });
    expect(text.endsWith('}\n')).toBe(true);
    expect(text).toContain('\n  "mutants": [');
  });
});
