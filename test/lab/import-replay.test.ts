// netrepro import round trip: each capture fixture (test/fixtures/capture/, made from a lab kept in the state of
// its source scenario) is imported and replayed on the netns lab; each probe of the replay observes what the
// source scenario's probe to the same destination observed in that state (recorded here: the live round trip,
// capture-import-roundtrip.test.ts, runs the sources themselves), and the diagnosis names the same culprit.
// Import and run times are printed (docs/import.md quotes them).
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import importCommand from '../../src/cli/commands/import.ts';
import { importScenario, scenarioYaml } from '../../src/cli/import/import-scenario.ts';
import { readBundle } from '../../src/cli/import/read-bundle.ts';
import { runScenario } from '../../src/engine/run/run-scenario.ts';
import { loadScenarioFile } from '../../src/model/load-scenario.ts';
import { NetnsProvider } from '../../src/providers/netns/netns-provider.ts';
import { culpritLine, SAME_DESTINATION } from '../capture-round-trip.ts';
import { PACKAGE_ROOT } from '../../src/model/package-root.ts';
import { runProcess } from '../child-process.ts';
import { cliInProcess } from '../cli-in-process.ts';
import { labSkipReason, tempDir } from '../lab-support.ts';

const CAPTURE = new URL('../fixtures/capture/', import.meta.url).pathname;

interface Case {
  bundle: string;
  source: string;
  /** The source's phase whose state the bundle holds. */
  phase: 'baseline' | 'faulted';
  /** What the source showed there, probe by probe. */
  outcomes: Record<string, string>;
  /** The culprit the source names for the probes that fail (the client's port as PORT): the replay's must be it. */
  culprit?: string;
}

const CASES: Case[] = [
  {
    bundle: 'healthy',
    source: 'forward-drop',
    phase: 'baseline',
    outcomes: { 'cross-node': 'ok', 'svc-other-node': 'ok', 'svc-same-node': 'ok', hairpin: 'ok' },
  },
  {
    bundle: 'forward-drop',
    source: 'forward-drop',
    phase: 'faulted',
    outcomes: { 'cross-node': 'timeout', 'svc-other-node': 'timeout', 'svc-same-node': 'timeout', hairpin: 'ok' },
    culprit: 'rule filter/FORWARD on node-a: -P FORWARD DROP',
  },
  {
    bundle: 'br-netfilter-off',
    source: 'br-netfilter-off',
    phase: 'faulted',
    outcomes: { 'cross-node': 'ok', 'svc-other-node': 'ok', 'svc-same-node': 'unexpected-source', hairpin: 'ok' },
    culprit:
      'kernel bridge (net.bridge.bridge-nf-call-iptables=0) on node-a: SYN-ACK 10.244.1.3:8080 > 10.244.1.2:PORT bridged past conntrack: no reverse NAT',
  },
  {
    bundle: 'no-masquerade',
    source: 'no-masquerade',
    phase: 'faulted',
    outcomes: { 'cross-node': 'ok', 'svc-other-node': 'ok', 'svc-same-node': 'ok', hairpin: 'timeout' },
    culprit: 'IP_LOCAL_SOURCE on eth0',
  },
  {
    bundle: 'udp-stale-conntrack',
    source: 'udp-stale-conntrack',
    phase: 'faulted',
    outcomes: { 'same-socket': 'timeout' },
    culprit: 'conntrack entry on node-a: udp 10.244.1.2:PORT > 10.96.0.10:53 DNAT to 10.244.1.3:53',
  },
];

const run = (loaded: Awaited<ReturnType<typeof loadScenarioFile>>) =>
  runScenario(loaded, { provider: new NetnsProvider(), signal: new AbortController().signal, emit: () => {} });

describe.skipIf(labSkipReason)('netrepro import: a replay shows what the captured lab showed', () => {
  for (const c of CASES)
    it(`${c.bundle}: each probe as in ${c.source}'s ${c.phase} phase, with the same culprit`, {
      timeout: 120_000,
    }, async () => {
      const dir = await tempDir('netrepro-import-');
      const t0 = performance.now();
      const scenario = importScenario(await readBundle(join(CAPTURE, c.bundle)), `replay-${c.bundle}`);
      const file = join(dir, `${c.bundle}.yaml`);
      await writeFile(file, scenarioYaml(scenario));
      const imported = await loadScenarioFile(file, { cached: false });
      const importMs = performance.now() - t0;
      const t1 = performance.now();
      const replay = await run(imported);
      const runMs = performance.now() - t1;
      expect(replay.verdict === 'passed' || replay.verdict === 'failed', JSON.stringify(replay.error)).toBe(true);
      expect(replay.phases.map((p) => p.name)).toEqual(['baseline']);
      const rows: string[] = [];
      for (const [id, outcome] of Object.entries(c.outcomes)) {
        const after = replay.phases[0]!.probes.find((p) => p.id === SAME_DESTINATION[id])!;
        expect(after.observed, `replay ${after.id}`).toBe(outcome);
        if (outcome !== 'ok') expect(culpritLine(after), `replay ${after.id}`).toContain(c.culprit);
        rows.push(
          `${id}: ${c.source} ${outcome} / replay ${after.observed}; replay's culprit ${culpritLine(after) ?? '-'}`,
        );
      }
      // every other replayed probe: ok where the capture is healthy, the verdict failed where it is not
      if (c.bundle === 'healthy') expect(replay.verdict).toBe('passed');
      else expect(replay.verdict).toBe('failed');
      console.log(
        `import-replay ${c.bundle}: import ${Math.round(importMs)} ms, run ${Math.round(runMs)} ms (lab ${replay.labs[0]?.provisionMs} ms), ${imported.scenario.probes.length} probes\n  ${rows.join('\n  ')}`,
      );
    });

  it('a captured state in files beside the scenario (too large inline) replays the same', {
    timeout: 120_000,
  }, async () => {
    const dir = await tempDir('netrepro-import-state-');
    // forward-drop with 4000 more ClusterIP rules on node-a: over the size a scenario may carry inline
    const bundle = join(dir, 'bundle');
    await cp(join(CAPTURE, 'forward-drop'), bundle, { recursive: true });
    const save = join(bundle, 'nodes/node-a/iptables-save.txt');
    const rule = (i: number) =>
      `[0:0] -A KUBE-SERVICES -d 10.97.${i >> 8}.${i & 255}/32 -p tcp -m tcp --dport 80 -j RETURN\n`;
    const text = await readFile(save, 'utf8');
    const commit = text.indexOf('COMMIT', text.indexOf('*nat'));
    const rules = Array.from({ length: 4000 }, (_, i) => rule(i)).join('');
    await writeFile(save, `${text.slice(0, commit)}${rules}${text.slice(commit)}`);
    const t0 = performance.now();
    await importCommand(bundle, { output: join(dir, 'big.yaml') });
    const importMs = performance.now() - t0;
    const t1 = performance.now();
    const replay = await run(await loadScenarioFile(join(dir, 'big.yaml'), { cached: false }));
    expect(replay.phases.length, JSON.stringify(replay.error ?? replay.skipReason)).toBe(1);
    const probe = replay.phases[0]!.probes.find((p) => p.id === 'client-web-b')!;
    expect(probe.observed).toBe('timeout');
    expect(culpritLine(probe)).toBe('rule filter/FORWARD on node-a: -P FORWARD DROP');
    console.log(
      `import-replay forward-drop + 4000 rules (state directory): import ${Math.round(importMs)} ms, run ${Math.round(performance.now() - t1)} ms (lab ${replay.labs[0]?.provisionMs} ms)`,
    );
  });

  it('netrepro explain names the culprit the source names, on both nodes', { timeout: 120_000 }, async () => {
    const dir = await tempDir('netrepro-import-explain-');
    const file = join(dir, 'forward-drop.yaml');
    expect((await cliInProcess(['import', join(CAPTURE, 'forward-drop'), '-o', file])).exitCode).toBe(0);
    const culprits = (text: string) => [...new Set(text.match(/culprit: [^\n(]+/g) ?? [])];
    // the source's, as its own explain names it (the live round trip compares the two runs' culprits)
    const explained = await runProcess('node', [join(PACKAGE_ROOT, 'bin/netrepro.js'), 'explain', file]);
    expect(culprits(explained.stdout)).toEqual([
      'culprit: rule filter/FORWARD on node-a: -P FORWARD DROP ',
      'culprit: rule filter/FORWARD on node-b: -P FORWARD DROP ',
    ]);
  });
});
