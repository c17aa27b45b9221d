// gate --json FILE: the gate result with the report version and metadata. Contract:
// docs/report-format.md and docs/schemas/gate-report.schema.json (from report-schema.ts).
import type { GateResult } from '../engine/gate/run-gate.ts';
import { reportMeta } from './report-meta.ts';
import { REPORT_VERSION, type GateReport } from './report-schema.ts';

/** `startedAt` defaults to the gate's start, from its duration. */
export function gateReport(result: GateResult, startedAt = new Date(Date.now() - result.durationMs)): GateReport {
  return { version: REPORT_VERSION, meta: reportMeta(startedAt), ...result };
}
