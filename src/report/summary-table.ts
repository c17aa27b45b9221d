// The run's closing table on stdout: a row per scenario (verdict, id, time, its phases in a few words) and the
// counts. The phase cell wraps under itself on a narrow terminal.
import type { Colors } from './colors.ts';
import type { RunResult, ScenarioResult } from '../engine/run/results.ts';
import { fitWidth } from './fit-width.ts';
import { seconds, verdictColor } from './scenario-outcome.ts';
import { countsLine, verdictCounts } from './verdict-counts.ts';

const mark = (status: string) => (status === 'passed' ? '✓' : status === 'errored' ? '✗(errored)' : '✗');

/**
 * A scenario's phases in a few words. Each fix variant runs baseline, faulted and fixed in its own lab:
 * a phase that went the same way in every variant is said once, otherwise per variant by name.
 */
export function phaseCell(s: ScenarioResult): string {
  const skipped = (s.skippedFixes ?? []).map((f) => f.fix);
  const ran = ranPhases(s);
  return skipped.length > 0 ? `${ran} (fix skipped: ${skipped.join(', ')})` : ran;
}

function ranPhases(s: ScenarioResult): string {
  const variants = [...new Set(s.phases.map((p) => p.variant))];
  if (variants.length <= 1) return s.phases.map((p) => `${p.name}${mark(p.status)}`).join(' ');
  const names = [...new Set(s.phases.map((p) => p.name))];
  return names
    .map((name) => {
      const runs = s.phases.filter((p) => p.name === name);
      const same = runs.every((p) => p.status === runs[0]!.status) && runs.length === variants.length;
      return same && name !== 'fixed'
        ? `${name}${mark(runs[0]!.status)}`
        : `${name}: ${runs.map((p) => `${p.variant}${mark(p.status)}`).join(' ')}`;
    })
    .join(' ');
}

/** The table, fitted to `columns` where a terminal says its width. */
export function summary(result: RunResult, pc: Colors, columns?: number): string {
  const width = Math.max(0, ...result.scenarios.map((s) => s.id.length));
  const rows = result.scenarios.map((s) => {
    const row = `  ${verdictColor(pc, s.verdict)(s.verdict.padEnd(8))} ${s.id.padEnd(width)} ${seconds(s.durationMs).padStart(8)}  ${pc.dim(phaseCell(s))}`;
    return fitWidth(row, columns);
  });
  return [
    ...rows,
    `${countsLine(verdictCounts(result))} (${seconds(result.durationMs)}, provider ${result.provider})`,
    '',
  ].join('\n');
}
