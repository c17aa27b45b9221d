// A fault that drops nothing still has a culprit: a probe that observes something else than in its lab's
// baseline keeps its trace even when it ended well, and its diagnosis names the NAT rule that changed what
// it observed (test/fixtures/nat-changes-what-the-probe-sees.yaml: a masquerade hides the outside client's
// address from the server; a DNAT sends the client to another backend).
import { describe, expect, it } from 'vitest';
import { runScenario } from '../../src/engine/run/run-scenario.ts';
import { loadScenarioFile } from '../../src/model/load-scenario.ts';
import { NetnsProvider } from '../../src/providers/netns/netns-provider.ts';
import { labSkipReason } from '../lab-support.ts';

describe.skipIf(labSkipReason)('diagnosis of a fault without a drop', () => {
  it('names the MASQUERADE that hid the client and the DNAT that picked another backend', {
    timeout: 120_000,
  }, async () => {
    const loaded = await loadScenarioFile(
      new URL('../fixtures/nat-changes-what-the-probe-sees.yaml', import.meta.url).pathname,
    );
    const result = await runScenario(loaded, {
      provider: new NetnsProvider(),
      signal: new AbortController().signal,
      emit: () => {},
      faultOnly: true,
    });
    expect(result.verdict, JSON.stringify(result.error)).toBe('passed');
    const phase = (name: string) => result.phases.find((p) => p.name === name)!;
    // nothing changed in the baseline: no probe kept its trace there
    expect(phase('baseline').probes.map((p) => p.trace)).toEqual([undefined, undefined]);
    const probe = (id: string) => phase('faulted').probes.find((p) => p.id === id)!;
    expect(probe('nodeport').observed).toBe('ok');
    expect(probe('nodeport').diagnosis?.culprit).toEqual({
      kind: 'rule',
      node: 'node-a',
      where: 'nat/KUBE-POSTROUTING',
      text: '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully',
    });
    expect(probe('nodeport').diagnosis?.reason).toMatch(
      /So the server saw 10\.244\.1\.1:\d+, the source node-a gave it/,
    );
    expect(probe('nodeport').diagnosis?.reason).toMatch(
      /"masquerade traffic for default\/web:http external destinations" -j KUBE-MARK-MASQ/,
    );
    expect(probe('nodeport').diagnosis?.evidence?.[0]).toMatchObject({ where: 'node/node-a', command: 'conntrack -E' });
    expect(probe('clusterip').diagnosis?.culprit).toMatchObject({
      kind: 'rule',
      where: expect.stringMatching(/^nat\/KUBE-SEP-\w+$/),
      text: expect.stringMatching(/-j DNAT --to-destination 10\.244\.1\.4:8080$/),
    });
    expect(probe('clusterip').diagnosis?.reason).toContain('by web-b where the baseline was answered by web-a');
  });
});
