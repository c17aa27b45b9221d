// harness/mutate/mutate-command.ts: mutants of several scenarios, their table, line and JSON.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as mutate from '../../../harness/mutate/mutate-scenario.ts';
import { mutantLine, mutateAll, mutateTable, writeMutateJson, type MutateRun } from '../../../harness/mutate/mutate-command.ts';
import type { ClusterProvider } from '../../../clusters/provider.ts';
import type { LoadedScenario } from '../../../harness/model/load-scenario.ts';
import { scenarioResult } from './results.ts';

vi.mock('../../../harness/mutate/mutate-scenario.ts', async (importOriginal) => ({ ...(await importOriginal<typeof mutate>()), mutateScenario: vi.fn() }));

const plain = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '');
const m = (scenario: string, mutation: string, killed: boolean, reason = 'r'): mutate.MutantResult => ({ scenario, mutation, killed, reason });
const loaded = (id: string) => ({ file: `${id}.yaml`, scenario: { id } }) as unknown as LoadedScenario;

afterEach(() => vi.mocked(mutate.mutateScenario).mockReset());

describe('mutateAll', () => {
  it('every scenario\'s mutants in the scenarios\' order, however they finish, and the kill rate', async () => {
    vi.mocked(mutate.mutateScenario).mockImplementation(async ({ scenario }) => {
      if (scenario.id === 'a') await new Promise((r) => setTimeout(r, 20)); // finishes last
      return scenario.id === 'a' ? [m('a', 'fault-removed', true), m('a', 'fix-removed:x', false)] : [m(scenario.id, 'fault-removed', true)];
    });
    const signal = new AbortController().signal;
    const provider = {} as ClusterProvider;
    const onMutant = () => {};
    const run = await mutateAll([loaded('a'), loaded('b')], { provider, signal, parallel: 2, onMutant });
    expect(run.mutants.map((x) => `${x.scenario} ${x.mutation}`)).toEqual(['a fault-removed', 'a fix-removed:x', 'b fault-removed']);
    expect(run.killRate).toBeCloseTo(2 / 3);
    expect(run.durationMs).toBeGreaterThanOrEqual(0);
    expect(Number.isInteger(run.durationMs)).toBe(true);
    expect(vi.mocked(mutate.mutateScenario).mock.calls[0]![1]).toEqual({ provider, signal, onMutant, original: undefined });
  });

  it('a run of the unmutated scenario already made is handed on, matched by id', async () => {
    vi.mocked(mutate.mutateScenario).mockResolvedValue([]);
    const b = scenarioResult({ id: 'b' });
    await mutateAll([loaded('a'), loaded('b')], { provider: {} as ClusterProvider, signal: new AbortController().signal, parallel: 1, originals: [scenarioResult({ id: 'c' }), b] });
    expect(vi.mocked(mutate.mutateScenario).mock.calls.map(([s, o]) => [s.scenario.id, o.original])).toEqual([
      ['a', undefined],
      ['b', b],
    ]);
  });

  it('its duration is the time between its start and its end, in whole ms', async () => {
    vi.mocked(mutate.mutateScenario).mockResolvedValue([]);
    const now = vi.spyOn(performance, 'now').mockReturnValueOnce(1000.2).mockReturnValueOnce(3500.9);
    try {
      expect((await mutateAll([loaded('a')], { provider: {} as ClusterProvider, signal: new AbortController().signal, parallel: 1 })).durationMs).toBe(2501);
    } finally {
      now.mockRestore();
    }
  });

  it('no scenario: no mutant, kill rate 1', async () => {
    expect(await mutateAll([], { provider: {} as ClusterProvider, signal: new AbortController().signal, parallel: 1 })).toMatchObject({ mutants: [], killRate: 1 });
  });
});

describe('mutantLine', () => {
  it('killed or SURVIVED, the scenario, the mutation and the reason', () => {
    expect(plain(mutantLine(m('race', 'fault-removed', true, 'race/fault-removed/faulted/p: expected timeout')))).toBe('killed   race fault-removed: race/fault-removed/faulted/p: expected timeout');
    expect(plain(mutantLine(m('race', 'fix-removed:x', false, 'every expectation held')))).toBe('SURVIVED race fix-removed:x: every expectation held');
  });

  it('a reason over 160 characters is cut to 157 and an ellipsis', () => {
    const long = 'x'.repeat(161);
    expect(plain(mutantLine(m('s', 'o', true, long)))).toBe(`killed   s o: ${'x'.repeat(157)}...`);
    expect(plain(mutantLine(m('s', 'o', true, 'y'.repeat(160))))).toBe(`killed   s o: ${'y'.repeat(160)}`);
  });
});

describe('mutateTable', () => {
  it('one row per mutant, columns as wide as the longest name (8 at least), then the kill rate', () => {
    const run: MutateRun = { mutants: [m('cilium-forward-race', 'fault-removed', true), m('s', 'outcome-swapped:p', false)], killRate: 0.5, durationMs: 12_345 };
    expect(plain(mutateTable(run)).split('\n')).toEqual([
      `  result   ${'scenario'.padEnd(19)} ${'mutation'.padEnd(17)}`,
      `  killed   cilium-forward-race ${'fault-removed'.padEnd(17)}`,
      `  SURVIVED ${'s'.padEnd(19)} outcome-swapped:p`,
      'kill rate 50.0%: 1 of 2 mutants killed (12.3 s)',
      '',
    ]);
  });

  it('short names still get 8-wide columns', () => {
    const run: MutateRun = { mutants: [m('s', 'o', true)], killRate: 1, durationMs: 0 };
    expect(plain(mutateTable(run)).split('\n')).toEqual(['  result   scenario mutation', '  killed   s        o       ', 'kill rate 100.0%: 1 of 1 mutants killed (0.0 s)', '']);
  });
});

describe('writeMutateJson', () => {
  let dir = '';
  afterEach(async () => dir && rm(dir, { recursive: true, force: true }));

  it('writes version 1, the mutants, the kill rate and the duration', async () => {
    dir = await mkdtemp(join(tmpdir(), 'netrepro-mutate-'));
    const run: MutateRun = { mutants: [m('s', 'fault-removed', true)], killRate: 1, durationMs: 5 };
    await writeMutateJson(join(dir, 'm.json'), run);
    const text = await readFile(join(dir, 'm.json'), 'utf8');
    expect(JSON.parse(text)).toEqual({ version: 1, mutants: [{ scenario: 's', mutation: 'fault-removed', killed: true, reason: 'r' }], killRate: 1, durationMs: 5 });
    expect(text.endsWith('}\n')).toBe(true);
    expect(text).toContain('\n  "mutants": [');
  });
});
