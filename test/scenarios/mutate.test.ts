// Every shipped scenario is falsifiable: each mutant of `netrepro mutate` (fault removed, each fix
// removed, each assertion without its step, each faulted outcome swapped, each absence) makes it fail. The unmutated runs are the one suite run of
// this `npm test` (test/suite-run.ts): only the mutants' own labs run here.
import { describe, expect, it } from 'vitest';
import { NetnsProvider } from '../../src/providers/netns/netns-provider.ts';
import { loadAllScenarios } from '../../src/model/find-scenarios.ts';
import { mutateAll } from '../../src/engine/mutate/mutate-command.ts';
import { plannedMutants } from '../../src/engine/mutate/mutate-scenario.ts';
import { labSkipReason } from '../lab-support.ts';
import { suiteRun, suiteSkipReason } from '../suite-run.ts';

describe.skipIf(labSkipReason)('netrepro mutate on every shipped scenario', () => {
  it.skipIf(suiteSkipReason())(
    'kills every mutant',
    async () => {
      const scenarios = await loadAllScenarios();
      const suite = suiteRun();
      expect(suite.error).toBeUndefined();
      // 4 labs at once: a mutant lab mostly waits (verdict deadlines, throttled downloads), it hardly computes
      const result = await mutateAll(scenarios, {
        provider: new NetnsProvider(),
        signal: new AbortController().signal,
        parallel: 4,
        originals: suite.result!.scenarios,
      });
      expect(result.originalFailures).toEqual([]);
      expect(result.mutants.filter((m) => !m.killed)).toEqual([]);
      // every planned mutant judged: removals, their per-assertion items, swapped outcomes, absences
      const expected = scenarios.reduce((n, { scenario }) => n + plannedMutants(scenario).length, 0);
      expect(result.mutants).toHaveLength(expected);
      expect(result.killRate).toBe(1);
    },
    300_000,
  );
});
