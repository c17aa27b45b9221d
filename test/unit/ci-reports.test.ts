// Reports for CI tools: JUnit with properties, skip reasons, failure bodies and files; Markdown;
// and a report even when the environment cannot run a lab (exit 3).
import { runProcess } from '../child-process.ts';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunResult, ScenarioResult } from '../../src/engine/run/results.ts';
import { unusableRun } from '../../src/engine/run/unusable-run.ts';
import { HarnessError } from '../../src/model/errors.ts';
import { PACKAGE_ROOT } from '../../src/model/package-root.ts';
import { junitXml } from '../../src/report/junit-reporter.ts';
import { runMarkdown } from '../../src/report/markdown-reporter.ts';
import { RunReportSchema } from '../../src/report/report-schema.ts';
import type { ReportContext } from '../../src/report/report-context.ts';
import { tempDir } from '../lab-support.ts';

const context: ReportContext = {
  netrepro: '9.9.9',
  node: 'v20.0.0',
  kernel: '6.18.0-test',
  startedAt: '2026-01-01T00:00:00.000Z',
  invocation: { bin: 'node bin/netrepro.js', env: [] },
  scenarios: new Map([
    [
      'broken',
      { cni: 'bridge', profile: 'kube-proxy-1.29', file: 'scenarios/broken.yaml', shipped: true, fixes: ['fix'] },
    ],
    [
      'not-here',
      { cni: 'cilium', profile: 'kube-proxy-1.15', file: 'scenarios/not-here.yaml', shipped: true, fixes: ['fix'] },
    ],
  ]),
};

const failed: ScenarioResult = {
  id: 'broken',
  title: 'a scenario whose fault did not show',
  file: '/abs/scenarios/broken.yaml',
  verdict: 'failed',
  durationMs: 1500,
  labs: [],
  log: ['lab log line'],
  phases: [
    {
      name: 'faulted',
      variant: 'enable-br-netfilter',
      steps: [],
      durationMs: 900,
      status: 'failed',
      probes: [
        {
          id: 'clusterip',
          expected: 'unexpected-source',
          observed: 'ok',
          matched: false,
          mismatch: 'expected unexpected-source, observed ok',
          summary: 'client -> 10.96.0.20:80 = ok',
          durationMs: 40,
          detail: {
            packets: [
              'IP 10.244.1.2.40000 > 10.96.0.20.80: Flags [S]',
              'IP 10.96.0.20.80 > 10.244.1.2.40000: Flags [S.] <&>',
            ],
          },
        },
      ],
      checks: [
        {
          id: 'no-nat',
          on: 'node/a',
          argv: ['conntrack', '-L'],
          expected: 'a line matching src=10.244.1.2',
          observed: 'no matching line',
          matched: false,
          evidence: ['tcp 6 117 SYN_SENT src=10.244.1.9'],
        },
      ],
    },
  ],
};
const skipped: ScenarioResult = {
  id: 'not-here',
  title: 't',
  file: '/abs/scenarios/not-here.yaml',
  verdict: 'skipped',
  durationMs: 3,
  labs: [],
  log: [],
  phases: [],
  skipReason: 'cilium needs bpffs',
};
const result = {
  version: 1,
  provider: 'netns',
  durationMs: 1503,
  summary: { passed: 0, failed: 1, errored: 0, skipped: 1 },
  scenarios: [failed, skipped],
} as RunResult;

describe('JUnit report', () => {
  // the scenario file's lines, as the reporter reads them: the faulted expectation of clusterip at line 30
  const lines = new Map([
    ['broken', (path: (string | number)[]) => (path.join('.') === 'fault.expect.clusterip' ? 30 : 1)],
  ]);
  const xml = junitXml(result, context, lines);

  it('carries provider, CNI, kernel, profile and tool version as properties', () => {
    for (const [name, value] of [
      ['provider', 'netns'],
      ['cni', 'bridge'],
      ['profile', 'kube-proxy-1.29'],
      ['kernel', '6.18.0-test'],
      ['netrepro', '9.9.9'],
    ]) {
      expect(xml).toContain(`<property name="${name}" value="${value}"/>`);
    }
  });

  it('a failure body with the evidence lines, escaped; file attributes', () => {
    expect(xml).toContain(
      '<testcase classname="broken.enable-br-netfilter" name="faulted: clusterip expects unexpected-source" time="0.040" file="scenarios/broken.yaml" line="30">',
    );
    expect(xml).toContain(
      '<failure message="expected unexpected-source, observed ok" type="probe">expected: unexpected-source\nobserved: ok (client -&gt; 10.96.0.20:80 = ok)',
    );
    expect(xml).toContain('  IP 10.96.0.20.80 &gt; 10.244.1.2.40000: Flags [S.] &lt;&amp;&gt;');
    expect(xml).toContain(
      'type="check">on node/a: conntrack -L\nexpected: a line matching src=10.244.1.2\nobserved: no matching line\nevidence:\n  tcp 6 117 SYN_SENT src=10.244.1.9</failure>',
    );
    expect(xml).toMatch(
      /<testsuite name="broken" tests="2" failures="2" errors="0" skipped="0" time="1.500" timestamp="2026-01-01T00:00:00.000Z" file="scenarios\/broken.yaml">/,
    );
  });

  it('skip reasons', () => {
    expect(xml).toContain('<skipped message="cilium needs bpffs"/>');
    // junit-10.xsd's root has no skipped or timestamp: they are on each testsuite
    expect(xml).toMatch(/<testsuites name="netrepro" tests="3" failures="2" errors="0" time="1.503">/);
    expect(xml).toMatch(/<testsuite name="not-here" tests="1" failures="0" errors="0" skipped="1"/);
  });

  it('an unusable environment is one errored case per scenario with the reason and hint', () => {
    const scenarios = [
      { file: '/abs/scenarios/broken.yaml', scenario: { id: 'broken', title: 't' } },
    ] as unknown as Parameters<typeof unusableRun>[0];
    const run = unusableRun(scenarios, 'netns', new HarnessError('ENVIRONMENT', 'netns lab needs root', 'run as root'));
    expect(junitXml(run, context)).toContain(
      '<error message="netns lab needs root" type="ENVIRONMENT">netns lab needs root\nhint: run as root</error>',
    );
  });
});

describe('a fix variant the provider could not run', () => {
  const partial: ScenarioResult = {
    ...failed,
    skippedFixes: [{ fix: 'fix', reason: 'local cannot start a node component by hand' }],
  };
  const partialResult = { ...result, scenarios: [partial] } as RunResult;

  it('is a skipped case of its own in JUnit, at the fix, and a note in Markdown', () => {
    const lines = new Map([['broken', (path: (string | number)[]) => (path.join('.') === 'fixes.0' ? 40 : 1)]]);
    expect(junitXml(partialResult, context, lines)).toContain(
      '<testcase classname="broken.fix" name="fixed" time="0.000" file="scenarios/broken.yaml" line="40">\n      <skipped message="local cannot start a node component by hand"/>',
    );
    expect(runMarkdown(partialResult, context)).toContain(
      'fix fix skipped: local cannot start a node component by hand',
    );
  });
});

describe('Markdown summary', () => {
  it('counts, a row per scenario, and what did not hold with its evidence', () => {
    const md = runMarkdown(result, context);
    expect(md).toContain('### netrepro: ❌ 0 passed, 1 failed, 1 skipped');
    expect(md).toContain('| `broken` | ❌ failed | bridge | kube-proxy-1.29 | faulted ✗ | 1.5 s |');
    expect(md).toContain('| `not-here` | ⏭️ skipped: cilium needs bpffs |');
    expect(md).toContain('- enable-br-netfilter/faulted/clusterip: expected unexpected-source, observed ok');
    expect(md).toContain('tcp 6 117 SYN_SENT src=10.244.1.9');
  });

  it('counts `measured` scenarios on their own, never as passed or failed, with their numbers', () => {
    const measured: ScenarioResult = {
      ...skipped,
      id: 'rates',
      verdict: 'measured',
      skipReason: undefined,
      measurements: ['reset rate 0.48 (n=40)'],
    };
    const md = runMarkdown({ ...result, scenarios: [measured] }, context);
    expect(md).toContain('### netrepro: ✅ 0 passed, 0 failed, 1 measured, 0 skipped');
    expect(md).toContain('- reset rate 0.48 (n=40)');
    expect(junitXml({ ...result, scenarios: [measured] }, context)).toContain(
      '<property name="measured.1" value="reset rate 0.48 (n=40)"/>',
    );
  });

  it('a phase whose step errored is an error case with the steps', () => {
    const phase = {
      ...failed.phases[0]!,
      status: 'errored' as const,
      probes: [],
      checks: [],
      error: { code: 'STEP_FAILED', message: 'step did not fire', hint: 'check the sysctl' },
      steps: [{ on: 'node/a', argv: ['sysctl', '-w', 'x=1'], durationMs: 3, exit: 1, output: 'permission denied' }],
    };
    const xml = junitXml({ ...result, scenarios: [{ ...failed, verdict: 'errored', phases: [phase] }] }, context);
    expect(xml).toContain('name="faulted: steps"');
    expect(xml).toContain(
      '<error message="step did not fire" type="STEP_FAILED">step did not fire\nhint: check the sysctl\n$ node/a: sysctl -w x=1 (exit 1)\n  permission denied</error>',
    );
  });
});

describe('reports on exit 3', () => {
  it('run --provider with an unusable environment still writes JUnit, JSON, Markdown and the step summary', async () => {
    const dir = await tempDir();
    const [junit, json, md, summary] = ['r.xml', 'r.json', 'r.md', 'summary.md'].map((f) => join(dir, f));
    // minikube: absent on a lab machine, and detect() needs no daemon to say so
    const r = await runProcess(
      'node',
      [
        'bin/netrepro.js',
        'run',
        'br-netfilter-clusterip-same-node',
        '--provider',
        'minikube',
        '--junit',
        junit!,
        '--json',
        json!,
        '--markdown',
        md!,
      ],
      {
        cwd: PACKAGE_ROOT,
        env: { PATH: '/usr/bin:/bin', GITHUB_STEP_SUMMARY: summary },
      },
    );
    expect(r.exitCode, r.stderr).toBe(3);
    expect(await readFile(junit!, 'utf8')).toMatch(
      /<error message="provider minikube cannot run here: [^"]+" type="ENVIRONMENT">/,
    );
    const report = JSON.parse(await readFile(json!, 'utf8'));
    expect(report).toMatchObject({
      provider: 'minikube',
      scenarios: [{ id: 'br-netfilter-clusterip-same-node', verdict: 'errored', error: { code: 'ENVIRONMENT' } }],
    });
    expect(RunReportSchema.safeParse(report).error).toBeUndefined();
    expect(await readFile(md!, 'utf8')).toContain('💥 errored: provider minikube cannot run here');
    // an environment that could not run is errored, not failed
    expect(await readFile(summary!, 'utf8')).toContain('### netrepro: ❌ 0 passed, 0 failed, 1 errored, 0 skipped');
  });
});
