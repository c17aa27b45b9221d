// Builders of run results for the verdict-logic tests: only the fields a test names differ from a
// passing default, so each test reads as the situation it judges.
import type { CheckResult, PhaseResult, ProbeResult, ScenarioResult } from '../../../src/engine/run/results.ts';
import type { Observation } from '../../../src/model/outcome.ts';

export const probe = (over: Partial<ProbeResult> = {}): ProbeResult => ({
  id: 'p',
  expected: 'ok',
  observed: 'ok',
  matched: true,
  summary: 'client -> 10.96.0.20:80 = ok',
  durationMs: 1,
  detail: {},
  ...over,
});

export const check = (over: Partial<CheckResult> = {}): CheckResult => ({
  id: 'c',
  on: 'node/a',
  argv: ['iptables-save'],
  expected: 'delta >= 1',
  observed: 'delta 1 (0 -> 1)',
  matched: true,
  evidence: [],
  ...over,
});

export const phase = (over: Partial<PhaseResult> = {}): PhaseResult => ({
  name: 'faulted',
  variant: 'fix',
  steps: [],
  probes: [],
  checks: [],
  durationMs: 1,
  status: 'passed',
  ...over,
});

export const scenarioResult = (over: Partial<ScenarioResult> = {}): ScenarioResult => ({
  id: 's',
  title: 't',
  file: 's.yaml',
  verdict: 'passed',
  durationMs: 1,
  phases: [],
  labs: [],
  log: [],
  ...over,
});

export const observation = (over: Partial<Observation> = {}): Observation => ({
  outcome: 'ok',
  summary: 'client -> 10.96.0.20:80 = ok',
  durationMs: 1,
  detail: {},
  ...over,
});

/** A repeated probe's observation: one run per outcome given (with `extra` on every run). */
export const repeated = (outcomes: Observation['outcome'][], extra: Partial<Observation> = {}): Observation => {
  const runs = outcomes.map((outcome) => ({ outcome, summary: `run ${outcome}`, durationMs: 1, ...extra }));
  return observation({
    outcome: outcomes[0],
    summary: `${runs.length} runs`,
    detail: { runs, distribution: { runs: runs.length, outcomes: {}, servedBy: {} } },
  });
};
