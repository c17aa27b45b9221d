// Labs running side by side do not see each other. Every lab uses the same names inside its
// namespaces and the same addresses (10.244.x pods, 10.96.x services, 172.18.0.x nodes), so a leak
// between two labs alive at once would change what a probe observes.
// 1. The one suite run of this `npm test` (test/suite-run.ts) ran with --parallel 2: its labs really
//    overlapped in time, and every probe and check of every phase still observed what its scenario
//    expects (each single probe's outcome is then the declared one; a repeated probe's distribution
//    held its declared count).
// 2. Serial against side by side, for one cheap scenario and its most adversarial neighbour, a copy
//    with the fault switched off (same names and addresses, only br_netfilter differs): the scenario
//    alone, then both at once, observe exactly the same, and the copy fails naming the expectation.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { NetnsProvider } from '../../src/providers/netns/netns-provider.ts';
import { runFailures, scenarioFailures } from '../../src/engine/run/failures.ts';
import { runSuite } from '../../src/engine/run/run-suite.ts';
import { loadAllScenarios } from '../../src/model/find-scenarios.ts';
import { parseScenario, type LoadedScenario } from '../../src/model/load-scenario.ts';
import { labNamespaces } from '../host-snapshot.ts';
import { labSkipReason } from '../lab-support.ts';
import { suiteRun, suiteSkipReason } from '../suite-run.ts';
import { observedOutcomes, verdicts } from './host-state.ts';

const ID = 'br-netfilter-clusterip-same-node';

describe.skipIf(labSkipReason)('parallel isolation', () => {
  const suite = suiteRun();

  it.skipIf(suiteSkipReason())(
    'the suite run (--parallel 2) had labs alive at the same time, and every probe and check observed what its scenario expects',
    () => {
      expect(suite.error).toBeUndefined();
      const result = suite.result!;
      expect(runFailures(result)).toEqual([]);
      const spans = Object.entries(suite.labLifetimes);
      expect(spans.length, 'lab lifetimes seen in /run/netns').toBe(result.scenarios.flatMap((s) => s.labs).length);
      const overlapping = spans.flatMap(([a, x], i) =>
        spans
          .slice(i + 1)
          .filter(([, y]) => x.from < y.to && y.from < x.to)
          .map(([b]) => `${a}+${b}`),
      );
      expect(overlapping.length, 'pairs of labs alive at once').toBeGreaterThan(0);
    },
  );

  it.skipIf(suiteSkipReason())(
    `${ID} alone and next to its no-fault copy observe the same; the copy fails naming the expectation that did not hold`,
    async () => {
      const [loaded] = (await loadAllScenarios()).filter((s) => s.scenario.id === ID) as [LoadedScenario];
      const source = await readFile(loaded.file, 'utf8');
      const fault = '- br-netfilter: { node: node-a, enabled: false }';
      expect(source).toContain(fault);
      const copy = {
        file: 'no-fault.yaml',
        scenario: parseScenario(
          source.replace(fault, '- br-netfilter: { node: node-a, enabled: true }'),
          'no-fault.yaml',
        ),
      };
      const provider = new NetnsProvider();
      const run = (scenarios: LoadedScenario[], parallel: number) =>
        runSuite(scenarios, { provider, parallel, signal: new AbortController().signal, emit: () => {} });

      const alone = await run([loaded], 1);
      const sideBySide = await run([loaded, copy], 2);
      expect(runFailures(alone)).toEqual([]);
      const [original, noFault] = sideBySide.scenarios;
      expect(original!.verdict).toBe('passed');
      expect(observedOutcomes({ ...sideBySide, scenarios: [original!] })).toEqual(observedOutcomes(alone));
      expect(verdicts({ ...sideBySide, scenarios: [original!] })).toEqual(verdicts(alone));
      // ... and as in the suite run, next to whichever scenario ran there
      expect(observedOutcomes(alone)).toEqual(
        observedOutcomes({ ...suite.result!, scenarios: suite.result!.scenarios.filter((s) => s.id === ID) }),
      );
      expect(noFault!.verdict).toBe('failed');
      expect(scenarioFailures(noFault!)).toEqual([
        expect.stringMatching(/^load-br-netfilter\/faulted\/clusterip: expected unexpected-source, observed ok/),
      ]);
      const runIds = [...alone.scenarios, ...sideBySide.scenarios].flatMap((s) => s.labs.map((l) => l.runId));
      expect((await labNamespaces()).filter((ns) => runIds.some((id) => ns.startsWith(`nr-${id}-`)))).toEqual([]);
    },
  );
});
