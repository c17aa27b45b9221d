// The gate's reports for CI and for people: JUnit (a regression or an unjudged incident fails, an incident
// neither profile applies to is skipped), one HTML page, and the console's colours by meaning.
import { createColors } from 'picocolors';
import { describe, expect, it } from 'vitest';
import type { GateResult } from '../../src/engine/gate/run-gate.ts';
import { gateHtml } from '../../src/report/gate-html.ts';
import { gateJunit } from '../../src/report/gate-junit.ts';
import { gateText } from '../../src/report/gate-report.ts';

const row = (id: string, baseline: string, candidate: string, change: string) => ({
  id,
  baseline,
  candidate,
  change,
  baselineReason: `${id} on the baseline <&>`,
  candidateReason: `${id} on the candidate`,
  baselineDecidedBy: ['probe-a'],
  candidateDecidedBy: [],
});
const gate = {
  baseline: 'kube-proxy-1.14',
  candidate: 'kube-proxy-1.15',
  durationMs: 1500,
  scenarios: [
    row('same', 'susceptible', 'susceptible', 'unchanged'),
    row('newly', 'immune', 'susceptible', 'regression'),
    row('cannot-tell', 'broken', 'broken', 'unjudged'),
    row('elsewhere', 'not-applicable', 'not-applicable', 'unchanged'),
  ],
} as GateResult;

describe('gate reports', () => {
  it('JUnit: one case per incident; regressions and the unjudged fail with both sides, the inapplicable are skipped', () => {
    const xml = gateJunit(gate, '2026-01-01T00:00:00.000Z');
    expect(xml).toMatch(/<testsuites name="netrepro gate" tests="4" failures="2" errors="0" time="1.500">/);
    expect(xml).toMatch(
      /<testsuite name="gate kube-proxy-1.14 -&gt; kube-proxy-1.15" tests="4" failures="2" errors="0" skipped="1"/,
    );
    expect(xml).toContain(
      '<failure message="regression: immune -&gt; susceptible" type="regression">kube-proxy-1.14: immune (probe-a): newly on the baseline &lt;&amp;&gt;\nkube-proxy-1.15: susceptible: newly on the candidate</failure>',
    );
    expect(xml).toContain('<failure message="unjudged: broken -&gt; broken" type="unjudged">');
    expect(xml).toContain('<testcase classname="gate" name="elsewhere" time="0.000">\n      <skipped');
  });

  it('HTML: the verdict sentence, then the regressions first', () => {
    const html = gateHtml(gate);
    expect(html).toContain('1 newly susceptible, 0 no longer susceptible, 2 unchanged, 1 could not be judged');
    expect(html.indexOf('<code>newly</code>')).toBeLessThan(html.indexOf('<code>same</code>'));
    expect(html).toContain('newly on the baseline &lt;&amp;&gt;');
  });

  it('the console paints the change by meaning and ends on the verdict, red when the gate fails', () => {
    const text = gateText(gate, createColors(true));
    expect(text).toContain('\x1b[31mregression\x1b[39m');
    expect(text).toContain('\x1b[2munchanged\x1b[22m');
    expect(text.trimEnd().split('\n').at(-1)?.startsWith('\x1b[31mkube-proxy-1.14 -> kube-proxy-1.15: 1 newly')).toBe(
      true,
    );
    expect(gateText(gate)).not.toContain('\x1b[');
  });
});
