// Counts of scenario verdicts for summaries. Read from the scenarios, not from result.summary, so a
// verdict added to the engine (`measured`: a scenario that reports numbers, never `passed`) is
// counted here as soon as it appears.
import type { RunResult } from '../engine/run/results.ts';

export interface VerdictCounts {
  passed: number;
  /** failed + errored: what makes the run exit 1. */
  failed: number;
  skipped: number;
  measured: number;
}

export function verdictCounts(result: RunResult): VerdictCounts {
  const count = (...verdicts: string[]) => result.scenarios.filter((s) => verdicts.includes(s.verdict)).length;
  return { passed: count('passed'), failed: count('failed', 'errored'), skipped: count('skipped'), measured: count('measured') };
}

export function countsLine(c: VerdictCounts): string {
  return [`${c.passed} passed`, `${c.failed} failed`, ...(c.measured ? [`${c.measured} measured`] : []), `${c.skipped} skipped`].join(', ');
}
