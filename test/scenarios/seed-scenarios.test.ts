// The scenario suite: every seed scenario must reproduce its symptom on the real kernel and the fix
// must clear it. A copy with the fault switched off must FAIL, naming the expectation.
// The seed scenarios' own verdicts, evidence and captures come from the one suite run of this
// `npm test` (test/suite-run.ts: --parallel 2, a relative report dir); the broken copies run here.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetnsProvider } from '../../src/providers/netns/netns-provider.ts';
import { scenarioFailures } from '../../src/engine/run/failures.ts';
import { runScenario } from '../../src/engine/run/run-scenario.ts';
import type { ScenarioResult } from '../../src/engine/run/results.ts';
import { loadAllScenarios } from '../../src/model/find-scenarios.ts';
import { parseScenario } from '../../src/model/load-scenario.ts';
import { ScenarioReportSchema } from '../../src/report/report-schema.ts';
import { hostSnapshot, labNamespaces } from '../host-snapshot.ts';
import { labSkipReason } from '../lab-support.ts';
import { suiteRun, suiteSkipReason } from '../suite-run.ts';

const scenarios = await loadAllScenarios();
const provider = new NetnsProvider();
const run = (loaded: (typeof scenarios)[number], reportDir?: string) =>
  runScenario(loaded, { provider, reportDir, signal: new AbortController().signal, emit: () => {} });
const suite = suiteRun();
const fromSuite = (id: string): ScenarioResult => {
  expect(suite.error).toBeUndefined();
  const result = suite.result?.scenarios.find((s) => s.id === id);
  expect(result, `${id} is not in the suite run`).toBeDefined();
  return result!;
};

/** The diagnosis is part of the contract: the culprit each seed incident's faulted probe must be attributed to. */
const CULPRITS: Record<string, { probe: string; kind: string; where: RegExp; text: RegExp; atDrop?: true }> = {
  'cilium-kube-proxy-forward-race': {
    probe: 'external',
    kind: 'rule',
    where: /^filter\/KUBE-FORWARD$/,
    text: /ctstate INVALID -j DROP$/,
    atDrop: true,
  },
  'conntrack-invalid-reset': {
    probe: 'download',
    kind: 'kernel',
    where: /^conntrack/,
    text: /^SEQ is over upper bound/,
  },
  'conntrack-invalid-reset-cross-node': {
    probe: 'download',
    kind: 'kernel',
    where: /^conntrack/,
    text: /^SEQ is over upper bound/,
  },
  'cilium-forward-race-cross-node': {
    probe: 'external',
    kind: 'rule',
    where: /^filter\/KUBE-FORWARD$/,
    text: /ctstate INVALID -j DROP$/,
    atDrop: true,
  },
  'stale-sock-lb-udp-dns': {
    probe: 'dns-clusterip',
    kind: 'bpf-program',
    where: /^cgroup_udp4_sendmsg \S+ \(1st of 2\)$/,
    text: /^cil_sock4_sendmsg id \d+: 10\.96\.0\.10:53 -> 10\.244\.1\.99:53$/,
  },
  'stale-sock-lb-program': {
    probe: 'clusterip',
    kind: 'bpf-program',
    where: /^cgroup_inet4_connect \S+ \(1st of 2\)$/,
    text: /^cil_sock4_connect id \d+: 10\.96\.0\.30:80 -> 10\.244\.1\.99:8080$/,
  },
  'br-netfilter-clusterip-same-node': {
    probe: 'clusterip',
    kind: 'kernel',
    where: /^bridge \(net\.bridge\.bridge-nf-call-iptables=0\)$/,
    text: /^SYN-ACK 10\.244\.1\.3:8080 > /,
  },
  'br-netfilter-dns-unexpected-source': {
    probe: 'nslookup-vip',
    kind: 'socket',
    where: /^udp socket connected to 10\.96\.0\.10:53$/,
    text: /^NO_SOCKET/,
  },
  'hairpin-off-pod-to-own-service': {
    probe: 'self-via-service',
    kind: 'kernel',
    where: /^veth\w+ on bridge cni0 \(hairpin off\)$/,
    text: /not sent back out its ingress port veth\w+$/,
    atDrop: true,
  },
};

async function leftoversOf(r: ScenarioResult): Promise<string[]> {
  const alive = await labNamespaces();
  return alive.filter((ns) => r.labs.some((l) => ns.startsWith(`nr-${l.runId}-`)));
}

describe.skipIf(labSkipReason)('seed scenarios on the netns lab', () => {
  let before: Record<string, string>;
  beforeAll(async () => {
    before = await hostSnapshot();
  });
  afterAll(async () => {
    // the root namespace's rules, routes, links, addresses and sysctls are exactly as they were
    // (around this file's own runs; around the suite run: test/host/root-capture.test.ts)
    expect(await hostSnapshot()).toEqual(before);
  });

  it.skipIf(suiteSkipReason()).each(scenarios.map((s) => [s.scenario.id, s] as const))(
    '%s: symptom reproduces, fix clears it',
    async (id, loaded) => {
      const result = fromSuite(id);
      // a real result keeps the JSON report contract (docs/report-format.md), nothing undocumented in it
      expect(ScenarioReportSchema.parse(result)).toEqual(result);
      expect(scenarioFailures(result)).toEqual([]);
      // a measurement reports numbers and is never counted as passed
      expect(result.verdict).toBe(loaded.scenario.purpose === 'measure' ? 'measured' : 'passed');
      expect(result.phases.map((p) => p.name)).toEqual(
        loaded.scenario.fixes.flatMap(() => ['baseline', 'faulted', 'fixed']),
      );
      // evidence was written per phase and node (the suite's report dir is relative: on a cilium node the
      // evidence commands run in the bpffs holder's mount namespace, cwd /, so this covers that too)
      const faulted = join(
        suite.reportDir,
        id,
        loaded.scenario.fixes.length > 1 ? loaded.scenario.fixes[0]!.name : '',
        'faulted',
      );
      for (const node of loaded.scenario.topology.nodes) {
        expect((await readdir(join(faulted, node.name))).sort()).toEqual(
          expect.arrayContaining(['capture.pcap', 'capture.txt', 'conntrack-L.txt', 'iptables-save.txt']),
        );
      }
      expect(suite.leftovers.filter((l) => result.labs.some((lab) => l.includes(lab.runId)))).toEqual([]);
      const culprit = CULPRITS[loaded.scenario.id];
      if (culprit) {
        const probe = result.phases.find((p) => p.name === 'faulted')!.probes.find((p) => p.id === culprit.probe)!;
        expect(probe.diagnosis?.culprit, probe.trace?.unavailable.join('; ')).toMatchObject({
          kind: culprit.kind,
          where: expect.stringMatching(culprit.where),
          text: expect.stringMatching(culprit.text),
        });
        // a drop the trace attributes (`atDrop`) ends the probe at once, not at its deadline (how fast is
        // measured by the bench script, not asserted here: a loaded machine would make it flaky)
        if (culprit.atDrop) expect(probe.detail.curlExit).toBe('stopped: the trace attributed a drop');
      }
    },
  );

  it.skipIf(suiteSkipReason())(
    'br-netfilter-clusterip-same-node: the faulted capture shows the un-NATed SYN-ACK and the client RST',
    async () => {
      const id = 'br-netfilter-clusterip-same-node';
      const result = fromSuite(id);
      expect(result.verdict).toBe('passed');
      const probe = result.phases.find((p) => p.name === 'faulted')!.probes.find((p) => p.id === 'clusterip')!;
      const pod = '10.244.1.3';
      const packets = probe.detail.packets as string[];
      expect(packets.some((l) => l.includes(`IP ${pod}.8080 > 10.244.1.2.`) && l.includes('Flags [S.]'))).toBe(true);
      expect(packets.some((l) => l.includes(`> ${pod}.8080: Flags [R]`))).toBe(true);
      const capture = await readFile(join(suite.reportDir, id, 'faulted', 'node-a', 'capture.txt'), 'utf8');
      expect(capture).toMatch(/> 10\.96\.0\.20\.80: Flags \[S\]/); // SYN to the ClusterIP
      expect(capture).toMatch(/> 10\.244\.1\.3\.8080: Flags \[S\]/); // DNATed SYN to the pod
      const conntrack = await readFile(join(suite.reportDir, id, 'faulted', 'node-a', 'conntrack-L.txt'), 'utf8');
      expect(conntrack).toMatch(/SYN_SENT src=10\.244\.1\.2 dst=10\.96\.0\.20 .*\[UNREPLIED\]/);
      // after the fix the reply carries the ClusterIP as source again
      const fixed = result.phases.find((p) => p.name === 'fixed')!.probes.find((p) => p.id === 'clusterip')!;
      expect(
        (fixed.detail.packets as string[]).some(
          (l) => l.includes('IP 10.96.0.20.80 > 10.244.1.2.') && l.includes('Flags [S.]'),
        ),
      ).toBe(true);
    },
  );

  it.skipIf(suiteSkipReason())(
    "evidence under a RELATIVE report dir works on a cilium node (its commands run in the bpffs holder's mount namespace, cwd /)",
    async () => {
      const id = 'stale-sock-lb-program';
      expect(scenarioFailures(fromSuite(id))).toEqual([]);
      expect((await readdir(join(suite.reportDir, id, 'faulted', 'node-a'))).sort()).toEqual(
        expect.arrayContaining(['capture.pcap', 'capture.txt']),
      );
    },
  );

  /** A copy with `from` replaced by `to`; only its first fix variant runs (what the assertions are about: one lab, not three). */
  const broken = async (id: string, from: string, to: string) => {
    const loaded = scenarios.find((s) => s.scenario.id === id)!;
    const source = await readFile(loaded.file, 'utf8');
    expect(source).toContain(from);
    const scenario = parseScenario(source.replace(from, to), `${id}-broken.yaml`);
    const result = await run({
      file: `${id}-broken.yaml`,
      scenario: { ...scenario, fixes: scenario.fixes.slice(0, 1) },
    });
    expect(await leftoversOf(result)).toEqual([]);
    return result;
  };

  it('cilium race with the good FORWARD order in the faulted phase fails on the probe and the DROP counter', async () => {
    const result = await broken(
      'cilium-kube-proxy-forward-race',
      'reboot: { node: node-a, order: [cilium, kube-proxy] }',
      'reboot: { node: node-a, order: [kube-proxy, cilium] }',
    );
    expect(result.verdict).toBe('failed');
    expect(scenarioFailures(result)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^restart-cilium\/faulted\/external: expected timeout, observed ok: client -> 172\.18\.0\.100:80 = ok \(HTTP 200/,
        ),
        'restart-cilium/faulted/check invalid-drops: expected delta >= 1, observed delta 0 (0 -> 0)',
      ]),
    );
  });

  it('stale socket-LB program attached second (after the current one) is harmless, so the scenario fails', async () => {
    const result = await broken(
      'stale-sock-lb-program',
      'backend: "10.244.1.99:8080" }',
      'backend: "10.244.1.99:8080", first: false }',
    );
    expect(result.verdict).toBe('failed');
    expect(scenarioFailures(result)).toEqual([
      expect.stringMatching(/^detach-stale-program\/faulted\/clusterip: expected unreachable, observed ok/),
    ]);
  });
});
