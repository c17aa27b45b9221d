// --parallel N bounds a run's labs to N where each lab is a cluster; netns labs also run a scenario's fix
// variants side by side. A fake provider counts the labs under way at once (its provisioning fails after a
// moment, which ends each variant's lab).
import { expect, it } from 'vitest';
import type { ClusterProvider } from '../../src/contract/provider.ts';
import { runSuite } from '../../src/engine/run/run-suite.ts';
import { HarnessError } from '../../src/model/errors.ts';
import { loadScenarioFile } from '../../src/model/load-scenario.ts';
import { NetnsProvider } from '../../src/providers/netns/netns-provider.ts';

/** Two scenarios of three fix variants each, run two at a time; returns the most labs provisioning at once. */
async function mostLabsAtOnce(labsAreClusters: boolean): Promise<number> {
  let now = 0;
  let most = 0;
  const netns = new NetnsProvider();
  const provider: ClusterProvider = {
    name: 'netns',
    capabilities: netns.capabilities,
    fit: () => undefined,
    detect: async () => ({ ok: true }),
    reap: async () => [],
    labsAreClusters,
    async provision() {
      most = Math.max(most, ++now);
      await new Promise((r) => setTimeout(r, 30));
      now--;
      throw new HarnessError('LAB_FAILED', 'no cluster here');
    },
  };
  const scenarios = await Promise.all(
    ['rp-filter-strict-asymmetric-route', 'conntrack-invalid-reset-cross-node'].map((id) =>
      loadScenarioFile(`scenarios/${id}.yaml`),
    ),
  );
  expect(scenarios.map((s) => s.scenario.fixes.length)).toEqual([3, 3]);
  const result = await runSuite(scenarios, {
    provider,
    parallel: 2,
    signal: new AbortController().signal,
    emit: () => {},
  });
  expect(result.summary.errored).toBe(2);
  return most;
}

it('runs at most N clusters at once, fix variants included', async () => {
  expect(await mostLabsAtOnce(true)).toBe(2);
});

it('runs netns labs of both scenarios and all their variants side by side', async () => {
  expect(await mostLabsAtOnce(false)).toBe(6);
});
