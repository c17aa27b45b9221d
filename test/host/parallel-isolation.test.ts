// Labs running side by side do not see each other: the seed suite run two labs at a time gives the
// same verdicts and the same observed outcome for every probe of every phase as a serial run.
import { describe, expect, it } from 'vitest';
import { NetnsProvider } from '../../clusters/netns/netns-provider.ts';
import { runSuite } from '../../harness/engine/run-suite.ts';
import { loadAllScenarios } from '../../harness/model/find-scenarios.ts';
import { runFailures } from '../../harness/engine/failures.ts';
import { labSkipReason } from '../lab-support.ts';
import { observedOutcomes, verdicts } from './host-state.ts';

describe.skipIf(labSkipReason)('parallel isolation', () => {
  it('parallel 2 and serial runs of the seed suite agree on every verdict and every observed outcome', { timeout: 180_000 }, async () => {
    const scenarios = await loadAllScenarios();
    const provider = new NetnsProvider();
    const run = (parallel: number) => runSuite(scenarios, { provider, parallel, signal: new AbortController().signal, emit: () => {} });
    const parallel = await run(2);
    const serial = await run(1);
    expect(runFailures(serial)).toEqual([]);
    expect(runFailures(parallel)).toEqual([]);
    expect(Object.keys(observedOutcomes(serial)).length).toBeGreaterThan(0);
    expect(verdicts(parallel)).toEqual(verdicts(serial));
    expect(observedOutcomes(parallel)).toEqual(observedOutcomes(serial));
  });
});
