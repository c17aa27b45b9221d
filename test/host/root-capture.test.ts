// The host is untouched by a whole suite run: while every seed scenario runs (two labs at a time),
// tcpdump on every interface of the root namespace must see no packet to or from a lab address,
// and the root namespace's rules, routes, links, addresses, sysctls, nftables, pinned BPF objects
// and cgroup v2 directories must be exactly as before. The run, the capture and both snapshots are
// the one suite run of this `npm test` (test/suite-run.ts); this file only asserts on them.
// Not vacuous: the same tcpdump command, run inside a lab node's namespace, does see lab packets.
import { describe, expect, it } from 'vitest';
import type { Spawned } from '../../src/contract/command.ts';
import { NetnsProvider } from '../../src/providers/netns/netns-provider.ts';
import { newRunId, runPrefix } from '../../src/contract/run-id.ts';
import { runFailures } from '../../src/engine/run/failures.ts';
import { loadAllScenarios } from '../../src/model/find-scenarios.ts';
import { parseScenario } from '../../src/model/load-scenario.ts';
import { labSkipReason } from '../lab-support.ts';
import { PACKET, suiteRun, suiteSkipReason, TCPDUMP } from '../suite-run.ts';
import { ignoringOtherRuns, otherRuns } from './host-state.ts';

interface Capture {
  process: Spawned;
  /** Stops tcpdump and returns the packet lines it printed, and its "N packets captured" line. */
  stop(): Promise<{ packets: string[]; summary: string }>;
}

async function startCapture(spawn: (argv: string[]) => Spawned): Promise<Capture> {
  const process = spawn(TCPDUMP);
  await process.waitFor(/listening on/, 10_000); // tcpdump's readiness line, on stderr
  return {
    process,
    async stop() {
      await process.stop('SIGINT');
      const lines = process.lines();
      return {
        packets: lines.filter((l) => PACKET.test(l)),
        summary: lines.find((l) => /packets captured/.test(l)) ?? '',
      };
    },
  };
}

const sanityScenario = parseScenario(
  `
id: capture-sanity
title: capture sanity
topology:
  cni: bridge
  nodes: [{ name: a, podCIDR: 10.244.1.0/24 }]
  pods: [{ name: client, node: a }, { name: web, node: a, serve: [{ http: 8080 }] }]
  services: [{ name: web, clusterIP: 10.96.0.20, ports: [{ port: 80, targetPort: 8080 }], endpoints: [web] }]
probes: [{ id: p, from: client, http: { to: svc/web, port: 80 } }]
baseline: { expect: { p: ok } }
fault: { steps: [{ run: { on: node/a, cmd: "true" } }], expect: { p: timeout } }
fixes: [{ steps: [{ run: { on: node/a, cmd: "true" } }], expect: { p: ok } }]
`,
  'capture-sanity.yaml',
);

describe.skipIf(labSkipReason)('the host is untouched by a suite run', () => {
  const provider = new NetnsProvider();
  const suite = suiteRun();

  it('sanity: the capture command does see lab packets inside a lab node namespace', async () => {
    const runId = newRunId();
    const lab = await provider.provision(sanityScenario.topology, {
      runId,
      prefix: runPrefix(runId),
      signal: new AbortController().signal,
      log: () => {},
    });
    try {
      const capture = await startCapture((argv) => lab.node('a').spawn(argv));
      const curl = await lab.pod('client').exec(['curl', '-sS', '--max-time', '2', 'http://10.96.0.20/']);
      expect(curl.stdout.trim()).toBe('web');
      const { packets, summary } = await capture.stop();
      const seen = `${summary}\n${capture.process.lines().join('\n')}`;
      expect(
        packets.some((l) => l.includes('10.96.0.20.80')),
        seen,
      ).toBe(true);
      expect(
        packets.some((l) => l.includes('10.244.1.')),
        seen,
      ).toBe(true);
      expect(summary).toMatch(/^[1-9]\d* packets captured/);
    } finally {
      await lab.destroy();
    }
  });

  it.skipIf(suiteSkipReason())(
    'no packet with a lab address appears on any root-namespace interface during the whole suite (parallel 2)',
    async () => {
      const scenarios = await loadAllScenarios();
      expect(suite.error).toBeUndefined();
      const result = suite.result!;
      console.info(`suite under root capture: ${JSON.stringify(result.summary)} in ${result.durationMs} ms`);
      // the suite really ran (a capture over nothing proves nothing)
      expect(runFailures(result)).toEqual([]);
      expect(result.scenarios.map((s) => s.id).sort()).toEqual(scenarios.map((s) => s.scenario.id).sort());
      expect(result.scenarios.flatMap((s) => s.phases.flatMap((p) => p.probes)).length).toBeGreaterThan(0);
      expect(suite.rootCapture!.packets).toEqual([]);
      expect(suite.rootCapture!.summary).toMatch(/^0 packets captured/);
    },
  );

  it.skipIf(suiteSkipReason())(
    "the root namespace and host state are exactly as before, and nothing of the suite's labs remains",
    () => {
      expect(suite.error).toBeUndefined();
      // other processes' labs on a shared machine have cgroups of their own: those are left out
      const own = suite.result!.scenarios.flatMap((s) => s.labs.map((l) => l.runId));
      const others = new Set([...otherRuns(suite.hostBefore!, own), ...otherRuns(suite.hostAfter!, own)]);
      expect(ignoringOtherRuns(suite.hostAfter!, own, others)).toEqual(
        ignoringOtherRuns(suite.hostBefore!, own, others),
      );
      expect(suite.leftovers).toEqual([]);
    },
  );
});
