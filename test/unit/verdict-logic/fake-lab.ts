// A stand-in for run-scenario.ts' runLab: each phase of a plan ends as `decide` says, recorded the way
// the real one records it (an errored phase is pushed, then its error thrown), and every lab started
// is logged by its label and plan.
import type { PhaseResult, ScenarioResult } from '../../../src/engine/run/results.ts';
import type { PhasePlan, ScenarioRunOptions } from '../../../src/engine/run/run-scenario.ts';
import { HarnessError } from '../../../src/model/errors.ts';
import type { CheckSpec, Scenario } from '../../../src/model/scenario-schema.ts';

export type Decide = (phase: PhasePlan, label: string) => Partial<PhaseResult> | Error;

export interface FakeLab {
  labs: { label: string; plan: string[] }[];
  /** What each lab was given: its phases' specs and the run options. */
  given: { specs: PhasePlan['spec'][]; options: ScenarioRunOptions }[];
  runLab: (
    scenario: Scenario,
    label: string,
    plan: readonly PhasePlan[],
    result: ScenarioResult,
    options: ScenarioRunOptions,
  ) => Promise<void>;
}

/** `phase:variant:N steps`, the plan as a test reads it. */
const planLine = (p: PhasePlan) => `${p.name}:${p.variant}:${p.spec.steps?.length ?? 0} steps`;

/**
 * `comesUp`: the error a lab fails with before its first phase; `tearsDown`: the one it fails with
 * after its last (undefined: none).
 */
export function fakeLab(
  decide: Decide,
  comesUp: (label: string) => Error | undefined = () => undefined,
  tearsDown: (label: string) => Error | undefined = () => undefined,
): FakeLab {
  const labs: FakeLab['labs'] = [];
  const given: FakeLab['given'] = [];
  return {
    labs,
    given,
    async runLab(_scenario, label, plan, result, options) {
      labs.push({ label, plan: plan.map(planLine) });
      given.push({ specs: plan.map((p) => p.spec), options });
      const notUp = comesUp(label);
      if (notUp) throw notUp;
      for (const p of plan) {
        const outcome = decide(p, label);
        if (outcome instanceof Error) {
          result.phases.push({
            name: p.name,
            variant: p.variant,
            steps: [],
            probes: [],
            checks: [],
            durationMs: 1,
            status: 'errored',
            error: { code: 'STEP_FAILED', message: outcome.message },
          });
          throw outcome;
        }
        result.phases.push({
          name: p.name,
          variant: p.variant,
          steps: [],
          probes: [],
          checks: [],
          durationMs: 1,
          status: 'passed',
          ...outcome,
        });
      }
      const down = tearsDown(label);
      if (down) throw down;
    },
  };
}

export const aborted = () => new HarnessError('ABORTED', 'interrupted');

const check = (c: Partial<CheckSpec>): CheckSpec =>
  ({
    id: 'c',
    on: 'node/a',
    cmd: 'iptables-save -c',
    sum: false,
    background: false,
    absentIsZero: false,
    control: false,
    ...c,
  }) as CheckSpec;

/**
 * A scenario as mutate reads it. Against the baseline, the fault asserts p (q is unchanged), the counter
 * `drops` and the absence `no-rst`; `ran` is a control. Fix `first` asserts p and its rule; `second` only p.
 */
export const SCENARIO = {
  id: 'race',
  title: 'a race',
  purpose: 'reproduce',
  baseline: { expect: { p: 'ok', q: 'ok' }, checks: [] },
  fault: {
    steps: [{ run: { on: 'node/a', cmd: 'inject' } }],
    expect: { p: 'timeout', q: { outcome: 'ok' } },
    checks: [
      check({ id: 'drops', counter: 'DROP (\\d+)', expect: { delta: { min: 1 } } }),
      check({ id: 'ran', matches: 'ACCEPT', expect: { count: { min: 1 } }, control: true }),
      check({ id: 'no-rst', cmd: 'tcpdump -c 10', matches: 'RST', expect: { count: 0 } }),
    ],
  },
  fixes: [
    {
      name: 'first',
      steps: [{ run: { on: 'node/a', cmd: 'fix' } }, { run: { on: 'node/a', cmd: 'fix more' } }],
      expect: { p: 'ok' },
      checks: [check({ id: 'rule', matches: 'fixed', expect: { count: 1 } })],
    },
    { name: 'second', steps: [{ run: { on: 'node/a', cmd: 'other fix' } }], expect: { p: 'ok', q: 'ok' }, checks: [] },
  ],
} as unknown as Scenario;

export { check as checkSpec };
