// The gate's matrix as text for the terminal and as Markdown fit for a pull-request comment.
import type { GateResult } from '../gate/run-gate.ts';

const MARK = { regression: '🔴 regression', improvement: '🟢 improvement', unchanged: 'unchanged', unjudged: '⚠️ unjudged' } as const;

export function gateMarkdown(g: GateResult): string {
  const counts = (c: keyof typeof MARK) => g.scenarios.filter((s) => s.change === c).length;
  return [
    `### netrepro gate: \`${g.baseline}\` → \`${g.candidate}\``,
    '',
    `${counts('regression')} newly susceptible, ${counts('improvement')} no longer susceptible, ${counts('unchanged')} unchanged${counts('unjudged') ? `, ${counts('unjudged')} could not be judged` : ''} (${(g.durationMs / 1000).toFixed(1)} s).`,
    '',
    `| incident | ${g.baseline} | ${g.candidate} | change |`,
    '|---|---|---|---|',
    ...g.scenarios.map((s) => `| \`${s.id}\` | ${s.baseline} | ${s.candidate} | ${MARK[s.change]} |`),
    '',
    '<details><summary>What each run observed</summary>',
    '',
    ...g.scenarios.flatMap((s) => [`- \`${s.id}\``, `  - ${g.baseline}: ${s.baselineReason}`, `  - ${g.candidate}: ${s.candidateReason}`]),
    '',
    '</details>',
    '',
  ].join('\n');
}

export function gateText(g: GateResult): string {
  const width = Math.max(...g.scenarios.map((s) => s.id.length), 8);
  const col = Math.max(g.baseline.length, g.candidate.length, 14);
  return [
    `${'incident'.padEnd(width)}  ${g.baseline.padEnd(col)}  ${g.candidate.padEnd(col)}  change`,
    ...g.scenarios.map((s) => `${s.id.padEnd(width)}  ${s.baseline.padEnd(col)}  ${s.candidate.padEnd(col)}  ${s.change}`),
    '',
  ].join('\n');
}
