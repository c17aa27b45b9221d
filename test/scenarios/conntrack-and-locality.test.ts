// The conntrack INVALID reset and the flannel locality table, beyond pass/fail: the probe names the
// injected packet exactly as the client saw it, and a copy without the trigger fails. The seed
// scenarios' observations come from the one suite run of this `npm test` (test/suite-run.ts).
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { NetnsProvider } from '../../src/providers/netns/netns-provider.ts';
import { runScenario } from '../../src/engine/run/run-scenario.ts';
import type { ScenarioResult } from '../../src/engine/run/results.ts';
import { loadAllScenarios } from '../../src/model/find-scenarios.ts';
import { parseScenario } from '../../src/model/load-scenario.ts';
import { labNamespaces } from '../host-snapshot.ts';
import { labSkipReason } from '../lab-support.ts';
import { suiteRun, suiteSkipReason } from '../suite-run.ts';

const scenarios = await loadAllScenarios();
const provider = new NetnsProvider();
const probe = (r: ScenarioResult, variant: string, phase: string, id: string) =>
  r.phases.find((p) => p.variant === variant && p.name === phase)!.probes.find((p) => p.id === id)!;
const fromSuite = (id: string): ScenarioResult => {
  const suite = suiteRun();
  expect(suite.error).toBeUndefined();
  const result = suite.result?.scenarios.find((s) => s.id === id);
  expect(result, `${id} is not in the suite run`).toBeDefined();
  return result!;
};
const leftovers = async (r: ScenarioResult) =>
  (await labNamespaces()).filter((ns) => r.labs.some((l) => ns.startsWith(`nr-${l.runId}-`)));

describe.skipIf(labSkipReason)('conntrack INVALID reset and flannel locality', () => {
  it.skipIf(suiteSkipReason())(
    'conntrack-invalid-reset: the client saw the forged segment from the pod IP and RST it with the seq the server expects',
    async () => {
      const result = fromSuite('conntrack-invalid-reset');
      expect(result.verdict).toBe('passed');
      const faulted = probe(result, 'be-liberal', 'faulted', 'download');
      // the injector is a background step of the fault: its evidence line is the JSON it printed
      const step = result.phases
        .find((p) => p.variant === 'be-liberal' && p.name === 'faulted')!
        .steps.find((s) => s.background)!;
      const injected = JSON.parse(step.evidence!) as {
        outcome: string;
        forgedSeq: number;
        forgedAck: number;
        src: string;
        dport: number;
      };
      expect(injected.outcome).toBe('injected');
      const packets = faulted.detail.packets as string[];
      // tcpdump -S: absolute sequence numbers, so the forged packet is found by its seq
      expect(
        packets.some(
          (l) =>
            l.includes(`IP ${injected.src}.8080 > 10.244.1.2.${injected.dport}:`) &&
            l.includes(`seq ${injected.forgedSeq}:`),
        ),
      ).toBe(true);
      expect(packets.some((l) => l.includes(`> ${injected.src}.8080: Flags [R], seq ${injected.forgedAck},`))).toBe(
        true,
      );
      expect(faulted.detail.source).toBe(`${injected.src}:8080`);
      // with be_liberal the same injection is harmless
      const fixed = probe(result, 'be-liberal', 'fixed', 'download');
      expect(fixed.detail.bytes).toBe(20_000_000);
    },
  );

  it('a copy whose injector never sees the download errors the faulted phase: it never passes as immune or fixed', async () => {
    const loaded = scenarios.find((s) => s.scenario.id === 'conntrack-invalid-reset')!;
    const source = (await readFile(loaded.file, 'utf8'))
      .replace('--port 8080', '--port 9999')
      .replace('--timeout-ms 5000', '--timeout-ms 300');
    const result = await runScenario(
      { file: 'no-trigger.yaml', scenario: parseScenario(source, 'no-trigger.yaml') },
      { provider, signal: new AbortController().signal, emit: () => {}, faultOnly: true },
    );
    expect(result.verdict).toBe('errored');
    const faulted = result.phases.find((p) => p.name === 'faulted')!;
    expect(faulted.status).toBe('errored');
    expect(faulted.error?.message).toMatch(
      /^step failed on pod\/web: \S*inject-ahead\S* --iface eth0 --port 9999 --timeout-ms 300\n/,
    );
    expect(await leftovers(result)).toEqual([]);
  });

  it.skipIf(suiteSkipReason())(
    'br-netfilter-locality-flannel: the table and the failure rate of the spread service, as measured',
    async () => {
      const result = fromSuite('br-netfilter-locality-flannel');
      expect(result.verdict).toBe('passed');
      const cells = (phase: string) =>
        ['pod-same-node', 'pod-other-node', 'clusterip-same-node', 'clusterip-other-node'].map(
          (id) => probe(result, 'load-br-netfilter', phase, id).observed,
        );
      expect(cells('faulted')).toEqual(['ok', 'ok', 'unexpected-source', 'ok']);
      expect(cells('fixed')).toEqual(['ok', 'ok', 'ok', 'ok']);
      const spread = probe(result, 'load-br-netfilter', 'faulted', 'spread').detail.distribution as {
        runs: number;
        outcomes: Record<string, number>;
      };
      expect(spread.runs).toBe(40);
      expect((spread.outcomes['unexpected-source'] ?? 0) + (spread.outcomes.ok ?? 0)).toBe(40);
      // the 40 runs go several at a time (`parallel`), each from its own source port, watching only that
      // port: every packet an example run kept belongs to that one connection of the client
      const examples = probe(result, 'load-br-netfilter', 'faulted', 'spread').detail.examples as Record<
        string,
        { packets: string[] }
      >;
      expect(Object.keys(examples).sort()).toEqual(['ok', 'unexpected-source']);
      for (const { packets } of Object.values(examples)) {
        const ports = new Set(packets.flatMap((l) => [...l.matchAll(/10\.244\.1\.2\.(\d+)/g)].map((m) => m[1])));
        expect(ports.size, packets.join('\n')).toBe(1);
      }
    },
  );
});
