// --markdown FILE and $GITHUB_STEP_SUMMARY: the run as Markdown for a CI summary page or a
// pull-request comment: counts, one row per scenario, and what did not hold with its evidence.
import type { RunResult, ScenarioResult } from '../engine/run/results.ts';
import { scenarioFailures } from '../engine/run/failures.ts';
import type { ReportContext } from './report-context.ts';
import type { Reporter } from './reporter.ts';
import { countsLine, verdictCounts } from './verdict-counts.ts';
import { writeReport } from './write-report.ts';

const MARK: Record<string, string> = {
  passed: '✅ passed',
  failed: '❌ failed',
  errored: '💥 errored',
  skipped: '⏭️ skipped',
  measured: '📏 measured',
};
const cell = (s: string) => s.replaceAll('|', '\\|').replaceAll('\n', ' ');
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function phases(s: ScenarioResult): string {
  const variants = new Set(s.phases.map((p) => p.variant)).size > 1;
  return s.phases
    .map(
      (p) =>
        `${variants ? `${p.variant}/` : ''}${p.name} ${p.status === 'passed' ? '✓' : p.status === 'errored' ? '✗ (errored)' : '✗'}`,
    )
    .join(', ');
}

function details(s: ScenarioResult): string[] {
  const lines = scenarioFailures(s);
  const packets = s.phases.flatMap((p) =>
    p.probes.filter((x) => !x.matched).flatMap((x) => ((x.detail.packets as string[] | undefined) ?? []).slice(0, 8)),
  );
  const evidence = s.phases.flatMap((p) => p.checks.filter((c) => !c.matched).flatMap((c) => c.evidence.slice(0, 8)));
  // the culprit of each probe that did not hold, once for the same rule or program across variants
  const culprits = new Set(
    s.phases.flatMap((p) =>
      p.probes
        .filter((x) => !x.matched && x.diagnosis)
        .map(
          (x) =>
            `culprit of ${x.id}: ${x.diagnosis!.culprit.kind} on ${x.diagnosis!.culprit.node}, ${x.diagnosis!.culprit.where}: \`${x.diagnosis!.culprit.text}\``,
        ),
    ),
  );
  lines.push(...culprits);
  if (s.error?.hint) lines.push(`hint: ${s.error.hint}`);
  return [
    `<details><summary><code>${s.id}</code>: ${s.verdict}</summary>`,
    '',
    ...lines.map((l) => `- ${l.replaceAll('\n', ' ')}`),
    ...(packets.length || evidence.length ? ['', '```', ...packets, ...evidence, '```'] : []),
    '',
    '</details>',
  ];
}

export function runMarkdown(result: RunResult, context: ReportContext): string {
  const counts = verdictCounts(result);
  const bad = result.scenarios.filter((s) => s.verdict === 'failed' || s.verdict === 'errored');
  const measured = result.scenarios.filter((s) => s.measurements?.length);
  return [
    `### netrepro: ${counts.failed || counts.errored ? '❌' : '✅'} ${countsLine(counts)}`,
    '',
    `provider \`${result.provider}\`, kernel \`${context.kernel}\`, netrepro ${context.netrepro}, Node ${context.node}, ${seconds(result.durationMs)}`,
    '',
    '| scenario | verdict | CNI | profile | phases | time |',
    '|---|---|---|---|---|---|',
    ...result.scenarios.map((s) => {
      const facts = context.scenarios.get(s.id);
      const verdict = MARK[s.verdict] ?? s.verdict;
      const skippedFixes = (s.skippedFixes ?? []).map(({ fix, reason }) => `fix ${fix} skipped: ${reason}`);
      const why = [s.skipReason ?? s.error?.message, ...skippedFixes].filter(Boolean).join('; ');
      return `| \`${s.id}\` | ${verdict}${why ? `: ${cell(why)}` : ''} | ${facts?.cni ?? ''} | ${facts?.profile ?? ''} | ${phases(s)} | ${seconds(s.durationMs)} |`;
    }),
    '',
    ...measured.flatMap((s) => [`**\`${s.id}\` measured:**`, '', ...(s.measurements ?? []).map((m) => `- ${m}`), '']),
    ...bad.flatMap(details),
    '',
  ].join('\n');
}

/** Writes `file` when given, appends to `stepSummary` ($GITHUB_STEP_SUMMARY) when set. */
export function markdownReporter(
  context: ReportContext,
  file: string | undefined,
  stepSummary: string | undefined,
): Reporter {
  return {
    async onRunEnd(result) {
      const text = runMarkdown(result, context);
      if (file) await writeReport('Markdown summary', file, text);
      if (stepSummary)
        await writeReport('step summary ($GITHUB_STEP_SUMMARY)', stepSummary, `${text}\n`, { append: true });
    },
  };
}
