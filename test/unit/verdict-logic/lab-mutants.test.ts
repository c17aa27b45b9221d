// harness/mutate/mutate-scenario.ts, mutateScenario: fault-removed and fix-removed mutants judged in
// one shared lab, or in a lab of their own when the shared run cannot judge them; an original that
// did not pass. The labs are stand-ins (fake-lab.ts): no root, no namespaces.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as engine from '../../../harness/engine/run-scenario.ts';
import { mutateScenario, type MutantResult } from '../../../harness/mutate/mutate-scenario.ts';
import type { ClusterProvider } from '../../../clusters/provider.ts';
import { HarnessError } from '../../../harness/model/errors.ts';
import { aborted, fakeLab, SCENARIO, type Decide, type FakeLab } from './fake-lab.ts';
import { check, phase, probe, scenarioResult } from './results.ts';

vi.mock('../../../harness/engine/run-scenario.ts', async (importOriginal) => ({ ...(await importOriginal<typeof engine>()), runLab: vi.fn(), runScenario: vi.fn() }));

const provider = {} as ClusterProvider;
const signal = new AbortController().signal;
const loaded = { file: 'race.yaml', scenario: SCENARIO };
const passed = scenarioResult({ id: 'race', phases: [phase({ probes: [probe({ observed: 'timeout', summary: 'c -> web = timeout' })] })] });
const miss = (mismatch: string) => ({ status: 'failed' as const, probes: [probe({ matched: false, mismatch })] });
const held = (summary: string) => ({ probes: [probe({ summary })] });

let lab: FakeLab;
function useLab(decide: Decide, comesUp?: (label: string) => Error | undefined, tearsDown?: (label: string) => Error | undefined) {
  lab = fakeLab(decide, comesUp, tearsDown);
  vi.mocked(engine.runLab).mockImplementation(lab.runLab);
}
const labMutants = (ms: MutantResult[]) => ms.filter((m) => !m.mutation.startsWith('outcome-swapped')).map((m) => [m.mutation, m.killed, m.reason]);

/** Every mutant's phase fails: what a good scenario shows. */
const everyMutantKilled: Decide = (p) => (p.variant === 'mutants' ? {} : miss(`${p.variant} did not hold`));

beforeEach(() => {
  vi.mocked(engine.runLab).mockReset();
  vi.mocked(engine.runScenario).mockReset();
});

describe('the original run', () => {
  it('one that did not pass is reported alone, with why: its mutants are not run', async () => {
    useLab(everyMutantKilled);
    const failed = scenarioResult({ id: 'race', verdict: 'failed', phases: [phase({ probes: [probe({ matched: false, mismatch: 'expected timeout, observed ok' })] })] });
    const seen: MutantResult[] = [];
    const ms = await mutateScenario(loaded, { provider, signal, original: failed, onMutant: (m) => seen.push(m) });
    expect(ms).toEqual([{ scenario: 'race', mutation: 'original', killed: false, reason: 'the scenario itself did not pass (fix/faulted/p: expected timeout, observed ok): its mutants cannot be judged' }]);
    expect(seen).toEqual(ms);
    expect(lab.labs).toEqual([]);
  });

  it('skipped: its skip reason; otherwise its verdict', async () => {
    useLab(everyMutantKilled);
    const skipped = await mutateScenario(loaded, { provider, signal, original: scenarioResult({ verdict: 'skipped', skipReason: 'needs Docker' }) });
    expect(skipped[0]!.reason).toBe('the scenario itself did not pass (needs Docker): its mutants cannot be judged');
    const errored = await mutateScenario(loaded, { provider, signal, original: scenarioResult({ verdict: 'errored' }) });
    expect(errored[0]!.reason).toBe('the scenario itself did not pass (errored): its mutants cannot be judged');
  });

  it('a measurement that held is judged like a pass', async () => {
    useLab(everyMutantKilled);
    const ms = await mutateScenario(loaded, { provider, signal, original: { ...passed, verdict: 'measured' } });
    expect(ms.map((m) => m.mutation)).toEqual(['outcome-swapped:p', 'fault-removed', 'fix-removed:first', 'fix-removed:second']);
  });

  it('without one given, the scenario is run first, quietly, with the same provider and signal', async () => {
    useLab(everyMutantKilled);
    vi.mocked(engine.runScenario).mockResolvedValue(passed);
    const ms = await mutateScenario(loaded, { provider, signal });
    expect(engine.runScenario).toHaveBeenCalledTimes(1);
    const [what, options] = vi.mocked(engine.runScenario).mock.calls[0]!;
    expect(what).toBe(loaded);
    expect(options).toMatchObject({ provider, signal });
    expect(options.emit({ kind: 'scenario-start', id: 'race', title: 't' })).toBeUndefined();
    expect(ms[0]).toMatchObject({ mutation: 'outcome-swapped:p', killed: true });
  });
});

describe('one shared lab', () => {
  it('runs baseline, the stepless fault, the real fault, then each stepless fix', async () => {
    useLab(everyMutantKilled);
    await mutateScenario(loaded, { provider, signal, original: passed });
    expect(lab.labs).toEqual([
      { label: 'mutants', plan: ['baseline:mutants:0 steps', 'faulted:fault-removed:0 steps', 'faulted:mutants:1 steps', 'fixed:fix-removed:first:0 steps', 'fixed:fix-removed:second:0 steps'] },
    ]);
  });

  it('each stepless phase keeps what its phase expects and checks; the lab runs quietly with the provider and signal', async () => {
    useLab(everyMutantKilled);
    await mutateScenario(loaded, { provider, signal, original: passed });
    const [{ specs, options }] = lab.given as [(typeof lab.given)[number]];
    expect(specs.map((s) => [s.expect, s.checks])).toEqual([
      [{ p: 'ok' }, []],
      [{ p: 'timeout' }, [{ id: 'drops' }]],
      [{ p: 'timeout' }, [{ id: 'drops' }]],
      [{ p: 'ok' }, [{ id: 'first-check' }]],
      [{ p: 'ok', q: 'reset' }, []],
    ]);
    expect(options).toMatchObject({ provider, signal });
    expect(options.emit({ kind: 'scenario-start', id: 'race', title: 't' })).toBeUndefined();
  });

  it('an error recorded on a phase (not an abort) leaves the other mutants to be judged', async () => {
    useLab((p) => (p.variant === 'fix-removed:second' ? new HarnessError('STEP_FAILED', 'step failed') : everyMutantKilled(p, '')));
    const ms = await mutateScenario(loaded, { provider, signal, original: passed });
    expect(labMutants(ms).map(([m, killed]) => [m, killed])).toEqual([
      ['fault-removed', true],
      ['fix-removed:first', true],
      ['fix-removed:second', true],
    ]);
  });

  it('a mutant is killed by the first failure of its phase, first line only', async () => {
    useLab((p) => (p.variant === 'fault-removed' ? { status: 'failed', checks: [check({ id: 'drops', matched: false, expected: 'delta >= 1', observed: 'delta 0 (4 -> 4)\nmore' })] } : everyMutantKilled(p, '')));
    const seen: string[] = [];
    const ms = await mutateScenario(loaded, { provider, signal, original: passed, onMutant: (m) => seen.push(m.mutation) });
    expect(labMutants(ms)).toEqual([
      ['fault-removed', true, 'fault-removed/faulted/check drops: expected delta >= 1, observed delta 0 (4 -> 4)'],
      ['fix-removed:first', true, 'fix-removed:first/fixed/p: fix-removed:first did not hold'],
      ['fix-removed:second', true, 'fix-removed:second/fixed/p: fix-removed:second did not hold'],
    ]);
    expect(seen).toEqual(['outcome-swapped:p', 'fault-removed', 'fix-removed:first', 'fix-removed:second']);
  });

  it('a mutant whose phase still held survives, with what its probes saw', async () => {
    useLab((p) => (p.variant === 'fault-removed' ? { probes: [probe({ summary: 'c -> web = ok' }), probe({ id: 'q', summary: 'c -> db = ok' })] } : p.variant === 'fix-removed:second' ? {} : everyMutantKilled(p, '')));
    const ms = await mutateScenario(loaded, { provider, signal, original: passed });
    expect(labMutants(ms)).toEqual([
      ['fault-removed', false, 'every expectation and check still held: c -> web = ok; c -> db = ok'],
      ['fix-removed:first', true, 'fix-removed:first/fixed/p: fix-removed:first did not hold'],
      ['fix-removed:second', false, 'every expectation and check still held: no probes'],
    ]);
    expect(lab.labs).toHaveLength(1);
  });
});

describe('a lab of its own, when the shared run cannot judge a mutant', () => {
  it('the shared baseline did not hold: every mutant runs alone, on the phases it rests on', async () => {
    useLab((p, label) => (label === 'mutants' && p.name === 'baseline' ? miss('flaky') : p.variant === 'mutants' ? {} : miss(`${p.variant} alone`)));
    const ms = await mutateScenario(loaded, { provider, signal, original: passed });
    expect(lab.labs.map((l) => [l.label, l.plan])).toEqual([
      ['mutants', ['baseline:mutants:0 steps', 'faulted:fault-removed:0 steps', 'faulted:mutants:1 steps', 'fixed:fix-removed:first:0 steps', 'fixed:fix-removed:second:0 steps']],
      ['fault-removed', ['baseline:mutants:0 steps', 'faulted:fault-removed:0 steps']],
      ['fix-removed:first', ['baseline:mutants:0 steps', 'faulted:mutants:1 steps', 'fixed:fix-removed:first:0 steps']],
      ['fix-removed:second', ['baseline:mutants:0 steps', 'faulted:mutants:1 steps', 'fixed:fix-removed:second:0 steps']],
    ]);
    expect(labMutants(ms)).toEqual([
      ['fault-removed', true, 'fault-removed/faulted/p: fault-removed alone'],
      ['fix-removed:first', true, 'fix-removed:first/fixed/p: fix-removed:first alone'],
      ['fix-removed:second', true, 'fix-removed:second/fixed/p: fix-removed:second alone'],
    ]);
  });

  it('the shared fault did not hold: fault-removed is still judged there, the fixes alone', async () => {
    useLab((p, label) => (label === 'mutants' && p.name === 'faulted' && p.variant === 'mutants' ? miss('no fault') : p.variant === 'mutants' ? {} : miss(`${p.variant} in ${label}`)));
    const ms = await mutateScenario(loaded, { provider, signal, original: passed });
    expect(lab.labs.map((l) => l.label)).toEqual(['mutants', 'fix-removed:first', 'fix-removed:second']);
    expect(labMutants(ms)).toEqual([
      ['fault-removed', true, 'fault-removed/faulted/p: fault-removed in mutants'],
      ['fix-removed:first', true, 'fix-removed:first/fixed/p: fix-removed:first in fix-removed:first'],
      ['fix-removed:second', true, 'fix-removed:second/fixed/p: fix-removed:second in fix-removed:second'],
    ]);
  });

  it('a mutant whose shared phase errored, or never ran, runs alone; the others are judged in the shared lab', async () => {
    useLab((p, label) => (label === 'mutants' && p.variant === 'fix-removed:first' ? new Error('lab broke') : p.variant === 'mutants' ? {} : held(`${p.variant} in ${label}`)));
    const ms = await mutateScenario(loaded, { provider, signal, original: passed });
    expect(lab.labs.map((l) => l.label)).toEqual(['mutants', 'fix-removed:first', 'fix-removed:second']);
    expect(labMutants(ms)).toEqual([
      ['fault-removed', false, 'every expectation and check still held: fault-removed in mutants'],
      ['fix-removed:first', false, 'every expectation and check still held: fix-removed:first in fix-removed:first'],
      ['fix-removed:second', false, 'every expectation and check still held: fix-removed:second in fix-removed:second'],
    ]);
  });

  it('a shared lab that never came up: every mutant alone', async () => {
    useLab((p) => (p.variant === 'mutants' ? {} : held(p.variant)), (label) => (label === 'mutants' ? new Error('netns add failed') : undefined));
    const ms = await mutateScenario(loaded, { provider, signal, original: passed });
    expect(lab.labs.map((l) => l.label)).toEqual(['mutants', 'fault-removed', 'fix-removed:first', 'fix-removed:second']);
    expect(labMutants(ms).map(([m, killed]) => [m, killed])).toEqual([
      ['fault-removed', false],
      ['fix-removed:first', false],
      ['fix-removed:second', false],
    ]);
  });

  it('its own lab that never came up judges nothing: not judged, with the first line of why', async () => {
    useLab(() => ({}), (label) => (label === 'mutants' || label === 'fault-removed' ? new Error('netns add failed\n  details') : undefined));
    const ms = await mutateScenario(loaded, { provider, signal, original: passed });
    expect(labMutants(ms)[0]).toEqual(['fault-removed', false, 'not judged: netns add failed']);
    expect(labMutants(ms)[1]).toEqual(['fix-removed:first', false, 'every expectation and check still held: no probes']);
  });

  it('its own lab that failed after its phases (teardown) judges nothing either', async () => {
    useLab(
      () => ({}),
      (label) => (label === 'mutants' ? new Error('netns add failed') : undefined),
      (label) => (label === 'fault-removed' ? new Error('teardown failed') : undefined),
    );
    const ms = await mutateScenario(loaded, { provider, signal, original: passed });
    expect(labMutants(ms)[0]).toEqual(['fault-removed', false, 'not judged: teardown failed']);
  });

  it('its own lab whose phase errored: the error is what failed', async () => {
    useLab((p, label) => (label === 'mutants' ? miss('x') : p.name === 'baseline' ? new Error('step failed on node/a\nexit 1') : {}));
    const ms = await mutateScenario(loaded, { provider, signal, original: passed });
    expect(labMutants(ms)[0]).toEqual(['fault-removed', true, 'mutants/baseline errored: step failed on node/a']);
  });
});

describe('an abort (Ctrl-C) stops mutate', () => {
  it('in the shared lab', async () => {
    useLab(() => aborted());
    await expect(mutateScenario(loaded, { provider, signal, original: passed })).rejects.toMatchObject({ code: 'ABORTED' });
  });

  it('in a lab of its own', async () => {
    useLab((p, label) => (label === 'mutants' ? miss('x') : aborted()));
    await expect(mutateScenario(loaded, { provider, signal, original: passed })).rejects.toMatchObject({ code: 'ABORTED' });
  });
});
