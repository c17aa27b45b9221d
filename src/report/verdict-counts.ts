// Counts of scenario verdicts for summaries. Read from the scenarios, not from result.summary, so a
// verdict added to the engine (`measured`: a scenario that reports numbers, never `passed`) is
// counted here as soon as it appears.
import type { RunResult } from '../engine/run/results.ts';

export interface VerdictCounts {
  passed: number;
  /** An expectation or check did not hold. */
  failed: number;
  /** The lab or a step broke, or the environment could not run it: nothing was judged. */
  errored: number;
  skipped: number;
  measured: number;
}

export function verdictCounts(result: RunResult): VerdictCounts {
  const count = (...verdicts: string[]) => result.scenarios.filter((s) => verdicts.includes(s.verdict)).length;
  return {
    passed: count('passed'),
    failed: count('failed'),
    errored: count('errored'),
    skipped: count('skipped'),
    measured: count('measured'),
  };
}

export function countsLine(c: VerdictCounts): string {
  return [
    `${c.passed} passed`,
    `${c.failed} failed`,
    ...(c.errored ? [`${c.errored} errored`] : []),
    ...(c.measured ? [`${c.measured} measured`] : []),
    `${c.skipped} skipped`,
  ].join(', ');
}
