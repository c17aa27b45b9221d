// The gate's matrix as text for the terminal and as Markdown fit for a pull-request comment.
import type { GateResult } from '../engine/gate/run-gate.ts';
import { type Colors, PLAIN } from './colors.ts';

const MARK = {
  regression: '🔴 regression',
  improvement: '🟢 improvement',
  unchanged: 'unchanged',
  unjudged: '⚠️ unjudged',
} as const;
/** What a reviewer must read first: regressions, then what could not be judged, then the rest. */
const ORDER = { regression: 0, unjudged: 1, improvement: 2, unchanged: 3 } as const;

/** The gate's verdict in one sentence: how many incidents the candidate newly reproduces, and the rest. */
export function gateVerdict(g: GateResult): string {
  const counts = (c: keyof typeof MARK) => g.scenarios.filter((s) => s.change === c).length;
  return `${counts('regression')} newly susceptible, ${counts('improvement')} no longer susceptible, ${counts('unchanged')} unchanged${counts('unjudged') ? `, ${counts('unjudged')} could not be judged` : ''} (${(g.durationMs / 1000).toFixed(1)} s).`;
}

export function gateMarkdown(g: GateResult): string {
  const rows = [...g.scenarios].sort((a, b) => ORDER[a.change] - ORDER[b.change]);
  return [
    `### netrepro gate: \`${g.baseline}\` → \`${g.candidate}\``,
    '',
    gateVerdict(g),
    '',
    `| incident | ${g.baseline} | ${g.candidate} | change |`,
    '|---|---|---|---|',
    ...rows.map((s) => `| \`${s.id}\` | ${s.baseline} | ${s.candidate} | ${MARK[s.change]} |`),
    '',
    '<details><summary>What each run observed</summary>',
    '',
    ...rows.flatMap((s) => [
      `- \`${s.id}\``,
      `  - ${g.baseline}: ${decided(s.baselineDecidedBy)}${s.baselineReason}`,
      `  - ${g.candidate}: ${decided(s.candidateDecidedBy)}${s.candidateReason}`,
    ]),
    '',
    '</details>',
    '',
  ].join('\n');
}

const decided = (by: readonly string[]) => (by.length ? `decided by ${by.map((x) => `\`${x}\``).join(', ')}: ` : '');

/** `pc`: the stream's colours (none by default): regressions and the unjudged red, improvements green. */
export function gateText(g: GateResult, pc: Colors = PLAIN): string {
  const paint = { regression: pc.red, unjudged: pc.red, improvement: pc.green, unchanged: pc.dim } as const;
  const width = Math.max(...g.scenarios.map((s) => s.id.length), 8);
  const col = Math.max(g.baseline.length, g.candidate.length, 14);
  // what decided each row that is not plainly unchanged: the probe, and why
  const side = (name: string, verdict: string, by: readonly string[], reason: string) =>
    `  ${name}: ${verdict}${by.length ? ` (${by.join(', ')})` : ''}: ${reason}`;
  const why = g.scenarios
    .filter((s) => s.change !== 'unchanged' || s.baseline === 'broken' || s.candidate === 'broken')
    .flatMap((s) => [
      `${s.id}: ${s.change}`,
      side(g.baseline, s.baseline, s.baselineDecidedBy, s.baselineReason),
      side(g.candidate, s.candidate, s.candidateDecidedBy, s.candidateReason),
    ]);
  return [
    `${'incident'.padEnd(width)}  ${g.baseline.padEnd(col)}  ${g.candidate.padEnd(col)}  change`,
    ...g.scenarios.map(
      (s) =>
        `${s.id.padEnd(width)}  ${s.baseline.padEnd(col)}  ${s.candidate.padEnd(col)}  ${paint[s.change](s.change)}`,
    ),
    ...(why.length ? ['', ...why] : []),
    '',
    // the closing line a terminal or CI log ends on, as the Markdown opens with it
    (g.scenarios.some((s) => s.change === 'regression' || s.change === 'unjudged') ? pc.red : pc.green)(
      `${g.baseline} -> ${g.candidate}: ${gateVerdict(g)}`,
    ),
    '',
  ].join('\n');
}
