// What explain, the console and the HTML report print of a diagnosis beyond its sentences: the state behind
// the culprit as each read-only command printed it (recorded rp_filter trace); and which probes keep their
// trace: one that ended well keeps it when it observes, or is expected to observe, something else than in
// its lab's baseline.
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { showsTheFault } from '../../src/engine/run/probe-trace-hooks.ts';
import type { PhaseResult, ProbeResult, RunResult } from '../../src/engine/run/results.ts';
import { diagnose } from '../../src/observe/trace/diagnosis.ts';
import { diagnosisLines } from '../../src/report/diagnosis-lines.ts';
import { explain } from '../../src/report/explain.ts';
import { renderHtml } from '../../src/report/html-reporter.ts';
import { tempDir } from '../lab-support.ts';

const recorded = JSON.parse(
  readFileSync(
    new URL('./fixtures/probe-traces/rp-filter-strict-asymmetric-route--other-node.json', import.meta.url),
    'utf8',
  ),
);
const probe: ProbeResult = {
  ...recorded.probe,
  diagnosis: diagnose({ ...recorded, trace: recorded.probe.trace }),
};

/** The recorded probe in a faulted phase of fix variant `variant`. */
const faulted = (variant: string): PhaseResult => ({
  name: 'faulted',
  variant,
  steps: [],
  probes: [probe],
  checks: [],
  durationMs: 0,
  status: 'passed',
});
/** A passed run of one scenario `s` with `phases`. */
const runOf = (...phases: PhaseResult[]): RunResult => ({
  version: 1,
  provider: 'netns',
  durationMs: 0,
  summary: { passed: 1, measured: 0, failed: 0, errored: 0, skipped: 0 },
  scenarios: [{ id: 's', title: 't', file: '', verdict: 'passed', durationMs: 0, phases, labs: [], log: [] }],
});

describe('the state behind the culprit in the reports', () => {
  it('explain and the console: each command, then its output indented, after the sentences', () => {
    const lines = diagnosisLines(probe);
    const at = lines.indexOf('$ node/node-b: sysctl net.ipv4.conf.all.rp_filter net.ipv4.conf.flannel/1.rp_filter');
    expect(at).toBeGreaterThan(1);
    expect(lines.slice(at + 1, at + 3)).toEqual([
      '  net.ipv4.conf.all.rp_filter = 1',
      '  net.ipv4.conf.flannel/1.rp_filter = 0',
    ]);
    expect(lines[at + 3]).toMatch(/^\$ node\/node-b: ip -4 route get 10\.244\.1\.\d+$/);
    expect(lines[at + 4]).toMatch(/^ {2}10\.244\.1\.\d+ via 172\.18\.0\.2 dev eth0 src 172\.18\.0\.3$/);
    expect(diagnosisLines(probe, { evidence: false }).some((l) => l.startsWith('$ '))).toBe(false);
  });

  it('the HTML report: the same lines set apart under the sentences', () => {
    const run = runOf(faulted('v'));
    expect(renderHtml(run)).toMatch(
      /<pre>\$ node\/node-b: sysctl net\.ipv4\.conf\.all\.rp_filter net\.ipv4\.conf\.flannel\/1\.rp_filter\n {2}net\.ipv4\.conf\.all\.rp_filter = 1\n/,
    );
  });
});

describe('the HTML report reproduces the run', () => {
  it('with the --profile it applied', () => {
    const run: RunResult = {
      version: 1,
      provider: 'netns',
      durationMs: 0,
      summary: { passed: 1, measured: 0, failed: 0, errored: 0, skipped: 0 },
      scenarios: [{ id: 's', title: 't', file: '', verdict: 'passed', durationMs: 0, phases: [], labs: [], log: [] }],
    };
    const facts = (appliedProfile?: string, invocation = { bin: 'node bin/netrepro.js', env: [] as string[] }) => ({
      netrepro: '0',
      node: '20',
      kernel: '6',
      startedAt: '',
      invocation,
      scenarios: new Map([
        [
          's',
          {
            cni: 'bridge',
            profile: 'kube-proxy-1.14',
            file: 'scenarios/s.yaml',
            shipped: true,
            fixes: [],
            appliedProfile,
          },
        ],
      ]),
    });
    expect(renderHtml(run, facts('kube-proxy-1.14'))).toContain(
      'reproduce: <code>node bin/netrepro.js run s --provider netns --profile kube-proxy-1.14</code>',
    );
    expect(renderHtml(run, facts())).toContain('reproduce: <code>node bin/netrepro.js run s --provider netns</code>');
    // from an install, with the knobs the run had: npx, and the environment in front
    expect(renderHtml(run, facts('/home/a b/p.yaml', { bin: 'npx netrepro', env: ['NETREPRO_CNI=bridge'] }))).toContain(
      "reproduce: <code>NETREPRO_CNI=bridge npx netrepro run s --provider netns --profile '/home/a b/p.yaml'</code>",
    );
    // the header counts measured scenarios too
    expect(renderHtml({ ...run, summary: { ...run.summary, measured: 2 } })).toContain(
      '1 passed, 2 measured, 0 failed',
    );
  });
});

describe('explain', () => {
  it('says a culprit found in several fix variants once, last, with the probes it explains', async () => {
    const run = runOf(faulted('a'), faulted('b'));
    const file = join(await tempDir(), 'run.json');
    await writeFile(file, JSON.stringify(run));
    const text = await explain(file);
    const story = diagnosisLines(probe);
    expect(text.split(story[1]!).length - 1).toBe(1);
    expect(text.trimEnd().split('\n').at(-1)).toBe(`      seen by: faulted (a) ${probe.id}, faulted (b) ${probe.id}`);
    expect(text).toContain(`    ${story[0]!.replace(/^culprit: /, '')}\n      ${story[1]}`);
  });
});

describe('which probes that ended well keep their trace', () => {
  const result = (expected: string, detail: Partial<ProbeResult['detail']> = {}): ProbeResult => ({
    id: 'p',
    expected,
    observed: 'ok',
    matched: true,
    summary: '',
    durationMs: 0,
    detail: { servedBy: 'web-a', ...detail },
  });
  it('one expected or observed otherwise than in the baseline', () => {
    const baseline = result('ok, served by web-a');
    expect(showsTheFault(result('ok, served by web-a, client address 10.244.1.1'), { baseline })).toBe(true);
    expect(showsTheFault(result('ok, served by web-a', { servedBy: 'web-b' }), { baseline })).toBe(true);
  });
  it('under a fix, only while it shows what the faulted phase showed', () => {
    const baseline = result('ok, served by web-a');
    const faulted = result('ok, served by web-a, client address 10.244.1.1');
    expect(showsTheFault(result('ok, served by web-a, client address 10.244.1.1'), { baseline, faulted })).toBe(true);
    // the fix made another backend answer: a change since the baseline, but the fix's, not the fault's
    expect(showsTheFault(result('ok, served by web-b', { servedBy: 'web-b' }), { baseline, faulted })).toBe(false);
  });
  it('not one that is the same, nor any in the baseline itself', () => {
    expect(showsTheFault(result('ok'), { baseline: result('ok') })).toBe(false);
    expect(showsTheFault(result('ok'), {})).toBe(false);
  });
});

describe('the topology picture', () => {
  it('is as wide as its longest label: a one-node cluster with a long Service line keeps it whole', async () => {
    const { topologyPicture } = await import('../../src/report/html-reporter.ts');
    const { loadScenarioFile } = await import('../../src/model/load-scenario.ts');
    const { PACKAGE_ROOT } = await import('../../src/model/package-root.ts');
    const { scenario } = await loadScenarioFile(
      join(PACKAGE_ROOT, 'scenarios/br-netfilter-dns-unexpected-source.yaml'),
    );
    const svg = topologyPicture(scenario.topology);
    const width = Number(/width="(\d+)"/.exec(svg)![1]);
    const longest = Math.max(
      ...[...svg.matchAll(/font-family="ui-monospace,monospace">([^<]*)</g)].map((m) => m[1]!.length),
    );
    expect(width).toBeGreaterThanOrEqual(Math.ceil(longest * 11.5 * 0.6) + 20);
  });
});
