import type { PhaseName, ProbeResult, CheckResult } from '../engine/results.ts';
import type { ProbeTraceResult, TracePacket } from '../model/trace-events.ts';
export interface Diagnosis { culprit: { kind: 'rule' | 'bpf-program' | 'kernel' | 'socket'; node: string; where: string; text: string }; packet: TracePacket; reason: string; path: unknown[] }
export interface DiagnosisInput { probe: ProbeResult; phase: PhaseName; checks: CheckResult[]; trace: ProbeTraceResult; address: (ref: string) => string }
export function diagnose(_input: DiagnosisInput): Diagnosis | undefined { return undefined; }
