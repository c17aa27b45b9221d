// What a run produces, and the events reporters see while it happens.
import type { CheckResult } from '../../observe/expect/run-checks.ts';
import type { Observation, Outcome } from '../../model/outcome.ts';
import type { ProbeTraceResult } from '../../model/trace-events.ts';
import type { Diagnosis } from '../../model/diagnosis.ts';

export type { CheckResult };

/** `measured`: a `purpose: measure` scenario whose assertions held; it reports numbers, it does not pass. */
export type Verdict = 'passed' | 'measured' | 'failed' | 'errored' | 'skipped';
export type PhaseName = 'baseline' | 'faulted' | 'fixed';

export interface ProbeResult {
  id: string;
  expected: string;
  observed: Outcome;
  matched: boolean;
  mismatch?: string;
  summary: string;
  durationMs: number;
  detail: Observation['detail'] &
    Pick<Observation, 'servedBy' | 'clientAddress' | 'source' | 'connected' | 'sentTo' | 'answers'>;
  /** Why a faulted or failing probe ended as it did: the rule, program, kernel reason or socket (src/observe/trace/). */
  diagnosis?: Diagnosis;
  /** The probe's packet trace, kept for faulted or failing probes (the evidence behind the diagnosis). */
  trace?: ProbeTraceResult;
  /** What tracing added to this probe, ms (set-up, teardown, facts; the lab's monitors on its first probe). */
  traceCostMs?: number;
}

export interface StepResult {
  on: string;
  /** The command, or the lab action as words (`start kube-proxy`). */
  argv: string[];
  durationMs: number;
  /** Exit status (0 for a lab action that completed), or why it has none. */
  exit?: number | string;
  /** Its output (stdout then stderr), tail. */
  output?: string;
  /** What proved it fired: the line it printed, or the value read back. */
  evidence?: string;
  /** Ran alongside the probes. */
  background?: boolean;
}

export interface PhaseResult {
  name: PhaseName;
  /** The fix variant this lab ran for. */
  variant: string;
  title?: string;
  steps: StepResult[];
  probes: ProbeResult[];
  checks: CheckResult[];
  durationMs: number;
  /** errored: a step failed or the lab broke, so nothing after it was judged. */
  status: 'passed' | 'failed' | 'errored';
  error?: { code: string; message: string; hint?: string };
}

export interface ScenarioResult {
  id: string;
  title: string;
  file: string;
  verdict: Verdict;
  durationMs: number;
  phases: PhaseResult[];
  /** Provisioning and teardown times per lab, ms. */
  labs: { variant: string; runId: string; provisionMs: number; teardownMs: number }[];
  evidenceDir?: string;
  error?: { code: string; message: string; hint?: string };
  skipReason?: string;
  /** Fix variants the provider cannot run, left out with the reason; the others ran. */
  skippedFixes?: { fix: string; reason: string }[];
  /** Every address a reference resolved to during the run (pod/web -> 10.244.1.3): expectations can be judged again without the lab. */
  addresses?: Record<string, string>;
  /** purpose: measure: the numbers the run measured (distributions of repeated probes, counter deltas). */
  measurements?: string[];
  /** Lab log lines, shown by reporters only when the scenario did not pass. */
  log: string[];
}

export interface RunResult {
  version: 1;
  provider: string;
  durationMs: number;
  summary: Record<Exclude<Verdict, never>, number>;
  scenarios: ScenarioResult[];
}

export type RunEvent =
  | { kind: 'run-start'; provider: string; scenarios: string[] }
  | { kind: 'scenario-start'; id: string; title: string }
  | { kind: 'lab-ready'; id: string; variant: string; ms: number }
  | { kind: 'phase-start'; id: string; phase: PhaseName; variant: string; title?: string }
  | { kind: 'step'; id: string; phase: PhaseName; variant: string; step: StepResult }
  | { kind: 'probe'; id: string; phase: PhaseName; variant: string; probe: ProbeResult }
  | { kind: 'check'; id: string; phase: PhaseName; variant: string; check: CheckResult }
  | { kind: 'scenario-end'; result: ScenarioResult }
  | { kind: 'run-end'; result: RunResult };
