// src/engine/mutate/mutate-scenario.ts: a removal's lab replays the original's history first (baseline,
// then the fault when a fix is removed). When that history does not hold, the removal was never put to
// the test: its mutant and assertions are not judged, rather than killed by a failure they did not cause.
import { beforeEach, expect, it, vi } from 'vitest';
import * as engine from '../../../src/engine/run/run-scenario.ts';
import { mutateScenario, type MutantResult } from '../../../src/engine/mutate/mutate-scenario.ts';
import type { ClusterProvider } from '../../../src/contract/provider.ts';
import { fakeLab, SCENARIO, type Decide } from './fake-lab.ts';
import { phase, probe, scenarioResult } from './results.ts';

vi.mock('../../../src/engine/run/run-scenario.ts', async (importOriginal) => ({
  ...(await importOriginal<typeof engine>()),
  runLab: vi.fn(),
  runScenario: vi.fn(),
}));

const passed = scenarioResult({ id: 'race', phases: [phase({ probes: [probe({ observed: 'timeout' })] })] });
const healthy = { probes: [probe({ id: 'p' }), probe({ id: 'q' })] };

async function mutants(decide: Decide): Promise<MutantResult[]> {
  vi.mocked(engine.runLab).mockImplementation(fakeLab(decide).runLab);
  return (
    await mutateScenario(
      { file: 'race.yaml', scenario: SCENARIO },
      { provider: {} as ClusterProvider, signal: new AbortController().signal, original: passed },
    )
  ).mutants;
}
const status = (ms: MutantResult[], prefix: string) =>
  ms.filter((m) => m.mutation.startsWith(prefix)).map((m) => [m.mutation, m.status]);

beforeEach(() => {
  vi.mocked(engine.runLab).mockReset();
});

it('a removal whose history held is judged on its own phase', async () => {
  const ms = await mutants((p) =>
    p.variant === 'fault-removed'
      ? { status: 'failed', probes: [probe({ id: 'p', matched: false, mismatch: 'expected timeout, observed ok' })] }
      : healthy,
  );
  expect(status(ms, 'fault-removed')).toEqual([['fault-removed', 'killed']]);
});

it('a baseline that errored in the fault-removed lab leaves fault-removed and every needs-fault not judged (the removed phase never ran)', async () => {
  const ms = await mutants((p, label) =>
    label === 'fault-removed' && p.name === 'baseline' ? new Error('step failed on node/a') : healthy,
  );
  expect(status(ms, 'fault-removed').concat(status(ms, 'needs-fault'))).toEqual([
    ['fault-removed', 'not-judged'],
    ['needs-fault:p', 'not-judged'],
    ['needs-fault:check/drops', 'not-judged'],
    ['needs-fault:check/no-rst', 'not-judged'],
  ]);
});

it('a baseline that failed in a fix-removed lab leaves fix-removed not judged (its history did not hold)', async () => {
  const ms = await mutants((p, label) =>
    label === 'fix-removed:second' && p.name === 'baseline'
      ? { status: 'failed', probes: [probe({ id: 'p', matched: false, mismatch: 'flaky' })] }
      : healthy,
  );
  expect(status(ms, 'fix-removed:second')).toEqual([['fix-removed:second', 'not-judged']]);
});

it('a fault that did not reproduce in a fix-removed lab leaves fix-removed not judged', async () => {
  const ms = await mutants((p, label) =>
    label === 'fix-removed:second' && p.name === 'faulted'
      ? { status: 'failed', probes: [probe({ id: 'p', matched: false, mismatch: 'expected timeout, observed ok' })] }
      : healthy,
  );
  expect(status(ms, 'fix-removed:second')).toEqual([['fix-removed:second', 'not-judged']]);
});

it("a history that did not hold is named by its phase's first failure, its first line", async () => {
  const ms = await mutants((p, label) =>
    label === 'fix-removed:second' && p.name === 'baseline'
      ? {
          status: 'failed',
          probes: [probe({ id: 'p', matched: false, mismatch: 'expected ok, observed reset\nsecond line' })],
        }
      : healthy,
  );
  expect(ms.find((m) => m.mutation === 'fix-removed:second')?.reason).toBe(
    'not judged: its mutants/baseline did not hold (mutants/baseline/p: expected ok, observed reset)',
  );
});

it('a history phase that errored without a message (stopped, not failed) is named by its status', async () => {
  const ms = await mutants((p, label) =>
    label === 'fix-removed:second' && p.name === 'baseline' ? { status: 'errored' } : healthy,
  );
  expect(ms.find((m) => m.mutation === 'fix-removed:second')?.reason).toBe(
    'not judged: its mutants/baseline did not hold (errored)',
  );
});
