// The regression gate on the real lab: kube-proxy 1.15's INVALID DROP is what opens the Cilium race.
import { describe, expect, it } from 'vitest';
import { NetnsProvider } from '../../src/providers/netns/netns-provider.ts';
import { runGate } from '../../src/engine/gate/run-gate.ts';
import { selectScenarios } from '../../src/model/find-scenarios.ts';
import { loadProfile } from '../../src/model/profile.ts';
import { labSkipReason } from '../lab-support.ts';

describe.skipIf(labSkipReason)('gate on the netns lab', () => {
  it('kube-proxy 1.14 -> 1.15 makes the cluster newly susceptible to the Cilium FORWARD race', async () => {
    const scenarios = await selectScenarios(['cilium-kube-proxy-forward-race']);
    const result = await runGate(
      scenarios,
      await loadProfile('kube-proxy-1.14'),
      await loadProfile('kube-proxy-1.15'),
      { provider: new NetnsProvider(), signal: new AbortController().signal },
    );
    expect(result.scenarios).toEqual([
      expect.objectContaining({
        id: 'cilium-kube-proxy-forward-race',
        baseline: 'immune',
        candidate: 'susceptible',
        change: 'regression',
      }),
    ]);
    // immune because the probe worked: the DROP rule is not there in 1.14
    expect(result.scenarios[0]!.baselineReason).toContain(
      '= ok (HTTP 200; SYN-ACK from 172.18.0.100:80; the server saw the client as ',
    );
  });
});
