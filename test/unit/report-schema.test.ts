// The JSON reports keep their contract: a run report written by the real JSON reporter and a gate
// report built by the real gate code validate against src/report/report-schema.ts, carry nothing
// the schema does not document, and docs/schemas/ holds exactly what the schema generates.
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { release, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunResult, ScenarioResult } from '../../src/engine/run/results.ts';
import { gateReport } from '../../src/report/gate-json.ts';
import { jsonReporter } from '../../src/report/json-reporter.ts';
import { netreproVersion } from '../../src/report/report-meta.ts';
import { GateReportSchema, reportJsonSchemas, RunReportSchema } from '../../src/report/report-schema.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

/** A run exercising every optional field: a measured and an errored scenario, background steps, a diagnosis. */
function sampleRun(): RunResult {
  const scenario = (over: Partial<ScenarioResult>): ScenarioResult => ({
    id: 'br-netfilter-clusterip-same-node',
    title: 'br_netfilter off',
    file: 'scenarios/br-netfilter-clusterip-same-node.yaml',
    verdict: 'passed',
    durationMs: 2100,
    log: ['lab up in 0.7 s'],
    labs: [{ variant: 'load-br-netfilter', runId: 'abc123', provisionMs: 700, teardownMs: 90 }],
    phases: [
      {
        name: 'faulted',
        variant: 'load-br-netfilter',
        title: 'br_netfilter "not loaded"',
        durationMs: 900,
        status: 'passed',
        steps: [
          {
            on: 'node/node-a',
            argv: ['sysctl', '-w', 'net.bridge.bridge-nf-call-iptables=0'],
            durationMs: 4,
            exit: 0,
            output: 'net.bridge.bridge-nf-call-iptables = 0',
            evidence: '0',
          },
          {
            on: 'pod/web',
            argv: ['/x/inject-ahead', '--iface', 'eth0'],
            durationMs: 800,
            exit: 'stopped',
            background: true,
            evidence: '{"outcome":"injected"}',
          },
        ],
        probes: [
          {
            id: 'clusterip',
            expected: 'unexpected-source from pod/web',
            observed: 'unexpected-source',
            matched: true,
            durationMs: 310,
            summary: 'client -> 10.96.0.20:80 = unexpected-source (SYN-ACK from 10.244.1.3:8080)',
            detail: {
              source: '10.244.1.3:8080',
              connected: false,
              sentTo: '10.96.0.20:80',
              packets: ['IP 10.244.1.3.8080 > 10.244.1.2.40000: Flags [S.]'],
              curlExit: 28,
            },
            diagnosis: {
              culprit: {
                kind: 'kernel',
                node: 'node-a',
                where: 'bridge (net.bridge.bridge-nf-call-iptables=0)',
                text: 'SYN-ACK 10.244.1.3:8080 > 10.244.1.2:40000 bridged past conntrack: no reverse NAT',
              },
              packet: {
                proto: 'tcp',
                src: '10.244.1.3',
                dst: '10.244.1.2',
                sport: 8080,
                dport: 40000,
                flags: 'SYN ACK',
              },
              reason: 'The SYN-ACK from 10.244.1.3:8080 was bridged without passing the nat table.',
              path: [
                {
                  at: 0.4,
                  where: 'pod/client',
                  hook: 'eth0',
                  packet: '10.244.1.3:8080 > 10.244.1.2:40000 [S.]',
                  action: 'received',
                  kind: 'receive',
                },
              ],
            },
            trace: {
              events: [
                {
                  kind: 'drop',
                  at: 0.5,
                  where: 'pod/client',
                  reason: 'NO_SOCKET',
                  location: 'tcp_v4_rcv+0x91',
                  iface: 'eth0',
                  packet: { proto: 'tcp', src: '10.244.1.3', dst: '10.244.1.2', sport: 8080, dport: 40000 },
                },
              ],
              facts: [{ kind: 'setting', node: 'node-a', name: 'net.bridge.bridge-nf-call-iptables', value: '0' }],
              unavailable: [],
              costMs: { start: 0, stop: 9, facts: 20 },
            },
            traceCostMs: 29,
          },
          {
            id: 'dns',
            expected: 'ok',
            observed: 'ok',
            matched: true,
            durationMs: 12,
            summary: 'ok',
            detail: { answers: ['10.96.0.10'], servedBy: 'coredns', distribution: { ok: 40 } },
          },
        ],
        checks: [
          {
            id: 'invalid-drops',
            on: 'node/node-a',
            argv: ['iptables', '-L'],
            expected: 'delta >= 1',
            observed: 'delta 3',
            matched: true,
            evidence: ['3 180 DROP all ctstate INVALID'],
          },
        ],
      },
    ],
    ...over,
  });
  return {
    version: 1,
    provider: 'netns',
    durationMs: 4200,
    summary: { passed: 1, measured: 1, failed: 0, errored: 1, skipped: 1 },
    scenarios: [
      scenario({}),
      scenario({
        id: 'conntrack-load-reset-rate',
        verdict: 'measured',
        measurements: ['load: 24 ok, 0 reset'],
        addresses: { 'pod/web': '10.244.1.3', 'svc/big': '10.96.0.30' },
      }),
      scenario({
        id: 'x',
        verdict: 'errored',
        error: { code: 'LAB_FAILED', message: 'CNI bridge ADD failed', hint: 'npm run preflight' },
        phases: [
          {
            name: 'baseline',
            variant: 'default',
            steps: [],
            probes: [],
            checks: [],
            durationMs: 1,
            status: 'errored',
            error: { code: 'COMMAND_FAILED', message: 'exit 1' },
          },
        ],
      }),
      scenario({ id: 'y', verdict: 'skipped', skipReason: 'needs Docker', phases: [], labs: [] }),
    ],
  };
}

/** Parsing drops keys the schema does not name: an equal result means nothing undocumented was written. */
function expectDocumented(schema: typeof RunReportSchema | typeof GateReportSchema, report: unknown) {
  const parsed = schema.safeParse(report);
  expect(parsed.error?.issues ?? []).toEqual([]);
  expect(parsed.data).toEqual(report);
}

describe('JSON report contract', () => {
  it('the run report written by the JSON reporter validates, with versions and start time', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'netrepro-report-'));
    try {
      const file = join(dir, 'sub', 'report.json');
      const reporter = jsonReporter(file);
      const before = Date.now();
      reporter.onEvent!({ kind: 'run-start', provider: 'netns', scenarios: ['br-netfilter-clusterip-same-node'] });
      await reporter.onRunEnd!(sampleRun());
      const report = JSON.parse(await readFile(file, 'utf8'));
      expectDocumented(RunReportSchema, report);
      expect(report.version).toBe(1);
      expect(report.meta).toMatchObject({
        netrepro: netreproVersion(),
        node: process.version,
        kernel: release(),
        platform: process.platform,
      });
      expect(netreproVersion()).toMatch(/^\d+\.\d+\.\d+/);
      expect(Date.parse(report.meta.startedAt)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(report.meta.startedAt)).toBeLessThanOrEqual(Date.now());
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('rejects a report that breaks the contract', () => {
    const report = JSON.parse(
      JSON.stringify({
        ...sampleRun(),
        meta: {
          netrepro: '0.1.0',
          node: 'v20',
          kernel: '6.18',
          platform: 'linux',
          arch: 'x64',
          startedAt: 'yesterday',
        },
      }),
    );
    expect(RunReportSchema.safeParse(report).success).toBe(false); // startedAt is not ISO 8601
    report.meta.startedAt = new Date().toISOString();
    expect(RunReportSchema.safeParse(report).success).toBe(true);
    report.scenarios[0].verdict = 'green';
    expect(RunReportSchema.safeParse(report).success).toBe(false);
  });

  it('the gate report validates, versioned, with metadata', () => {
    const report = JSON.parse(
      JSON.stringify(
        gateReport({
          baseline: 'kube-proxy-1.15',
          candidate: 'kube-proxy-1.29-be-liberal',
          durationMs: 5000,
          scenarios: [
            {
              id: 'cilium-kube-proxy-forward-race',
              baseline: 'susceptible',
              candidate: 'immune',
              change: 'improvement',
              baselineReason: 'timeout',
              candidateReason: 'ok',
              baselineDecidedBy: ['external'],
              candidateDecidedBy: ['external'],
            },
            {
              id: 'conntrack-invalid-reset',
              baseline: 'unjudged',
              candidate: 'immune',
              change: 'unjudged',
              baselineReason: 'errored: step failed',
              candidateReason: 'ok',
              baselineDecidedBy: [],
              candidateDecidedBy: ['external'],
            },
          ],
        }),
      ),
    );
    expectDocumented(GateReportSchema, report);
    expect(report.version).toBe(1);
    expect(report.meta.node).toBe(process.version);
    expect(Date.now() - Date.parse(report.meta.startedAt)).toBeGreaterThanOrEqual(4000); // started durationMs ago
  });

  it('docs/schemas/ is what the schema generates (npm run schema)', () => {
    for (const [name, schema] of Object.entries(reportJsonSchemas())) {
      expect(JSON.parse(readFileSync(join(ROOT, 'docs/schemas', name), 'utf8')), name).toEqual(schema);
    }
  });
});
