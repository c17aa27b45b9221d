// gate --junit FILE: the gate as a CI test report, one <testcase> per incident: a regression, or an incident
// the gate could not judge, is a failure with both sides' reasons; an incident neither profile applies to is
// skipped. The same shape as run's JUnit (Jenkins' junit-10.xsd: counts on the root, skipped on the suite).
import type { GateResult, GateRow } from '../engine/gate/run-gate.ts';
import { gateVerdict } from './gate-report.ts';
import { attrs, xml } from './xml-text.ts';

const seconds = (ms: number) => (ms / 1000).toFixed(3);

function caseXml(g: GateResult, s: GateRow): string {
  const sides = [
    `${g.baseline}: ${s.baseline}${s.baselineDecidedBy.length ? ` (${s.baselineDecidedBy.join(', ')})` : ''}: ${s.baselineReason}`,
    `${g.candidate}: ${s.candidate}${s.candidateDecidedBy.length ? ` (${s.candidateDecidedBy.join(', ')})` : ''}: ${s.candidateReason}`,
  ];
  const open = `    <testcase${attrs({ classname: 'gate', name: s.id, time: seconds(0) })}`;
  if (s.change === 'regression' || s.change === 'unjudged')
    return `${open}>\n      <failure${attrs({ message: `${s.change}: ${s.baseline} -> ${s.candidate}`, type: s.change })}>${xml(sides.join('\n'))}</failure>\n    </testcase>`;
  if (s.baseline === 'not-applicable' && s.candidate === 'not-applicable')
    return `${open}>\n      <skipped${attrs({ message: s.candidateReason })}/>\n    </testcase>`;
  return `${open}>\n      <system-out>${xml([`${s.change}`, ...sides].join('\n'))}</system-out>\n    </testcase>`;
}

export function gateJunit(g: GateResult, startedAt: string): string {
  const failures = g.scenarios.filter((s) => s.change === 'regression' || s.change === 'unjudged').length;
  const skipped = g.scenarios.filter((s) => s.baseline === 'not-applicable' && s.candidate === 'not-applicable').length;
  const name = `gate ${g.baseline} -> ${g.candidate}`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites${attrs({ name: 'netrepro gate', tests: g.scenarios.length, failures, errors: 0, time: seconds(g.durationMs) })}>`,
    `  <testsuite${attrs({ name, tests: g.scenarios.length, failures, errors: 0, skipped, time: seconds(g.durationMs), timestamp: startedAt })}>`,
    '    <properties>',
    `      <property${attrs({ name: 'baseline', value: g.baseline })}/>`,
    `      <property${attrs({ name: 'candidate', value: g.candidate })}/>`,
    `      <property${attrs({ name: 'verdict', value: gateVerdict(g) })}/>`,
    '    </properties>',
    ...g.scenarios.map((s) => caseXml(g, s)),
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
