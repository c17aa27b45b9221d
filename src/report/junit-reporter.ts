// --junit FILE: one <testsuite> per scenario, one <testcase> per probe expectation and check of each
// phase, in the shape CI test reporters read (Jenkins, GitLab, dorny/test-reporter, mikepenz/action-
// junit-report): run facts as <properties>, skip reasons as <skipped message>, failure bodies with
// the evidence (a probe's mismatch, culprit and packets, a check's matching lines), `file` and `line` on every
// case (the line of the expectation or check in the scenario file, where CI annotations land). Valid against
// Jenkins' junit-10.xsd (xunit-plugin): the root carries name, tests, failures, errors and time only.
// Written by hand: the XML is small and a builder library cost ~100 ms of start-up.
import { readFile } from 'node:fs/promises';
import { lineFinder } from '../model/load-scenario.ts';
import { writeReport } from './write-report.ts';
import { attrs, xml } from './xml-text.ts';
import type { CheckResult, PhaseResult, ProbeResult, RunResult, ScenarioResult } from '../engine/run/results.ts';
import type { ReportContext } from './report-context.ts';
import type { Reporter } from './reporter.ts';

const PACKETS_SHOWN = 12;

const seconds = (ms: number) => (ms / 1000).toFixed(3);

interface Case {
  classname: string;
  name: string;
  ms: number;
  file?: string;
  line?: number;
  failure?: { message: string; type: string; body: string[] };
  error?: { message: string; type: string; body: string[] };
  skipped?: string;
  out?: string[];
}

function probeBody(p: ProbeResult): string[] {
  const packets = (p.detail.packets as string[] | undefined) ?? [];
  const culprit = p.diagnosis?.culprit;
  return [
    `expected: ${p.expected}`,
    `observed: ${p.observed} (${p.summary})`,
    ...(culprit
      ? [
          `culprit: ${culprit.kind} on ${culprit.node}, ${culprit.where}: ${culprit.text}`,
          `why: ${p.diagnosis!.reason}`,
        ]
      : []),
    ...(packets.length
      ? [
          `packets on the client (first ${Math.min(PACKETS_SHOWN, packets.length)} of ${packets.length}):`,
          ...packets.slice(0, PACKETS_SHOWN).map((l) => `  ${l}`),
        ]
      : []),
  ];
}

function checkBody(c: CheckResult): string[] {
  return [
    `on ${c.on}: ${c.argv.join(' ')}`,
    `expected: ${c.expected}`,
    `observed: ${c.observed}`,
    ...(c.evidence.length ? ['evidence:', ...c.evidence.map((l) => `  ${l}`)] : []),
  ];
}

/** The line of a path in the scenario file (1 when unknown). */
type Lines = (path: (string | number)[]) => number;

/** Where a phase's expectations and checks are in the file: baseline, fault, or the variant's fix. */
function phasePath(phase: { name: string; variant: string }, fixes: readonly string[]): (string | number)[] {
  if (phase.name === 'baseline') return ['baseline'];
  if (phase.name === 'faulted') return ['fault'];
  return ['fixes', Math.max(0, fixes.indexOf(phase.variant))];
}

/** Where a scenario's cases are: its file, the line of a path in it, and its fix variants in file order. */
interface CaseSite {
  file: string | undefined;
  fixes: readonly string[];
  lines: Lines;
}

function cases(s: ScenarioResult, file: string | undefined, fixes: readonly string[], lines: Lines): Case[] {
  const site: CaseSite = { file, fixes, lines };
  return [...scenarioCases(s, site), ...s.phases.flatMap((phase) => phaseCases(s.id, phase, site))];
}

/** A skipped or errored scenario, and each fix variant the provider could not run. */
function scenarioCases(s: ScenarioResult, { file, fixes, lines }: CaseSite): Case[] {
  const out: Case[] = [];
  if (s.verdict === 'skipped')
    out.push({
      classname: s.id,
      name: 'scenario',
      ms: s.durationMs,
      file,
      line: 1,
      skipped: s.skipReason ?? 'skipped',
    });
  if (s.error) {
    out.push({
      classname: s.id,
      name: s.phases.length ? 'lab' : 'scenario',
      ms: s.durationMs,
      file,
      line: lines(['topology']),
      error: {
        message: s.error.message,
        type: s.error.code,
        body: [s.error.message, ...(s.error.hint ? [`hint: ${s.error.hint}`] : []), ...s.log.slice(-20)],
      },
    });
  }
  for (const { fix, reason } of s.skippedFixes ?? [])
    out.push({
      classname: `${s.id}.${fix}`,
      name: 'fixed',
      ms: 0,
      file,
      line: lines(['fixes', Math.max(0, fixes.indexOf(fix))]),
      skipped: reason,
    });
  return out;
}

/** A phase's steps when one errored, then a case per probe expectation and per check. */
function phaseCases(id: string, phase: PhaseResult, { file, fixes, lines }: CaseSite): Case[] {
  const out: Case[] = [];
  const classname = `${id}.${phase.variant}`;
  const at = phasePath(phase, fixes);
  if (phase.status === 'errored' && phase.error) {
    // a step that failed or did not prove it fired: nothing after it in the phase was judged
    const steps = phase.steps.map(
      (st) =>
        `$ ${st.on}: ${st.argv.join(' ')} (exit ${st.exit ?? '?'})${st.evidence ? ` -> ${st.evidence}` : ''}${st.output ? `\n  ${st.output.trim().split('\n').slice(-5).join('\n  ')}` : ''}`,
    );
    out.push({
      classname,
      name: `${phase.name}: steps`,
      ms: phase.durationMs,
      file,
      line: lines([...at, 'steps']),
      error: {
        message: phase.error.message,
        type: phase.error.code,
        body: [phase.error.message, ...(phase.error.hint ? [`hint: ${phase.error.hint}`] : []), ...steps],
      },
    });
  }
  for (const p of phase.probes) {
    out.push({
      classname,
      name: `${phase.name}: ${p.id} expects ${p.expected}`,
      ms: p.durationMs,
      file,
      line: lines([...at, 'expect', p.id]),
      out: [p.summary],
      failure: p.matched
        ? undefined
        : { message: p.mismatch ?? 'expectation did not hold', type: 'probe', body: probeBody(p) },
    });
  }
  for (const [i, c] of phase.checks.entries()) {
    out.push({
      classname,
      name: `${phase.name}: check ${c.id} ${c.reported ? 'reports' : 'expects'} ${c.expected}`,
      ms: 0,
      file,
      line: lines([...at, 'checks', i]),
      out: [...(c.reported ? [c.observed] : []), ...c.evidence],
      failure: c.matched
        ? undefined
        : {
            message: `check ${c.id} on ${c.on}: expected ${c.expected}, observed ${c.observed}`,
            type: 'check',
            body: checkBody(c),
          },
    });
  }
  return out;
}

function caseXml(c: Case): string {
  const inner = [
    c.skipped !== undefined ? `      <skipped${attrs({ message: c.skipped })}/>` : '',
    c.failure
      ? `      <failure${attrs({ message: c.failure.message, type: c.failure.type })}>${xml(c.failure.body.join('\n'))}</failure>`
      : '',
    c.error
      ? `      <error${attrs({ message: c.error.message, type: c.error.type })}>${xml(c.error.body.join('\n'))}</error>`
      : '',
    c.out?.length ? `      <system-out>${xml(c.out.join('\n'))}</system-out>` : '',
  ].filter(Boolean);
  const open = `    <testcase${attrs({ classname: c.classname, name: c.name, time: seconds(c.ms), file: c.file, line: c.line })}`;
  return inner.length ? `${open}>\n${inner.join('\n')}\n    </testcase>` : `${open}/>`;
}

/** `lines`: each scenario's line finder (its file as read at the end of the run); without one, every case is line 1. */
export function junitXml(
  result: RunResult,
  context: ReportContext,
  lines: ReadonlyMap<string, Lines> = new Map(),
): string {
  const totals = { tests: 0, failures: 0, errors: 0 };
  const suites = result.scenarios.map((s) => {
    const facts = context.scenarios.get(s.id);
    const all = cases(s, facts?.file ?? s.file, facts?.fixes ?? [], lines.get(s.id) ?? (() => 1));
    const n = {
      tests: all.length,
      failures: all.filter((c) => c.failure).length,
      errors: all.filter((c) => c.error).length,
      skipped: all.filter((c) => c.skipped !== undefined).length,
    };
    totals.tests += n.tests;
    totals.failures += n.failures;
    totals.errors += n.errors;
    const properties: [string, string | undefined][] = [
      ['provider', result.provider],
      ['cni', facts?.cni],
      ['profile', facts?.profile],
      ['kernel', context.kernel],
      ['netrepro', context.netrepro],
      ['node', context.node],
      ['verdict', s.verdict],
      // a measurement reports numbers: they ride along as properties, not as passes
      ...(s.measurements ?? []).map((m, i) => [`measured.${i + 1}`, m] as [string, string]),
      ...(s.skipReason ? [['skip-reason', s.skipReason] as [string, string]] : []),
      ...(s.evidenceDir ? [['evidence', s.evidenceDir] as [string, string]] : []),
    ];
    return [
      `  <testsuite${attrs({ name: s.id, tests: n.tests, failures: n.failures, errors: n.errors, skipped: n.skipped, time: seconds(s.durationMs), timestamp: context.startedAt, file: facts?.file ?? s.file })}>`,
      '    <properties>',
      ...properties
        .filter(([, v]) => v !== undefined)
        .map(([name, value]) => `      <property${attrs({ name, value })}/>`),
      '    </properties>',
      ...all.map(caseXml),
      '  </testsuite>',
    ].join('\n');
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites${attrs({ name: 'netrepro', ...totals, time: seconds(result.durationMs) })}>`,
    ...suites,
    '</testsuites>',
    '',
  ].join('\n');
}

export function junitReporter(file: string, context: ReportContext): Reporter {
  return {
    async onRunEnd(result) {
      const lines = new Map<string, Lines>();
      for (const [id, facts] of context.scenarios) {
        const source = await readFile(facts.file, 'utf8').catch(() => undefined);
        if (source !== undefined) lines.set(id, lineFinder(source));
      }
      await writeReport('JUnit report', file, junitXml(result, context, lines));
    },
  };
}
