// --json FILE: the machine-readable run report. Contract: docs/report-format.md and
// docs/schemas/run-report.schema.json, generated from src/report/report-schema.ts.
import type { RunResult } from '../engine/run/results.ts';
import { reportMeta } from './report-meta.ts';
import type { Reporter } from './reporter.ts';
import type { RunReport } from './report-schema.ts';
import { writeReport } from './write-report.ts';

/** The report for `result`: the run result with the versions and start time it depends on. */
export function runReport(result: RunResult, startedAt: Date): RunReport {
  const { version, ...rest } = result;
  return { version, meta: reportMeta(startedAt), ...rest };
}

export function jsonReporter(file: string): Reporter {
  let startedAt: Date | undefined;
  return {
    onEvent(event) {
      if (event.kind === 'run-start') startedAt = new Date();
    },
    async onRunEnd(result) {
      const report = runReport(result, startedAt ?? new Date(Date.now() - result.durationMs));
      await writeReport('JSON report', file, `${JSON.stringify(report, null, 2)}\n`);
    },
  };
}
