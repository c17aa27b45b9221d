// Mutation testing for scenarios: is each verdict falsifiable? A mutant changes the scenario the way a
// broken reproduction would look (the fault never applied, a fix never applied, the symptom expected
// wrongly); the scenario must then fail. A mutant that still passes shows an expectation or check that
// cannot tell the difference.
//   (a) fault-removed        every fault step removed (background ones too)
//   (b) fix-removed:NAME     that fix's steps removed (for a negative control: its own check must notice)
//   (c) outcome-swapped:ID   the faulted expectation of probe ID with every other outcome in turn
// (c) needs no lab: it is judged on the original run's observations. (a) and (b) share one lab per
// scenario: a phase without steps leaves the lab as it found it, so baseline, the stepless fault, the real
// fault and each stepless fix can run one after another; a mutant whose shared run could not be judged
// (an error, a baseline that did not hold) gets a lab of its own.
import { HarnessError } from '../model/errors.ts';
import type { LoadedScenario } from '../model/load-scenario.ts';
import { OUTCOMES } from '../model/outcome.ts';
import type { ExpectedSpec, Scenario } from '../model/scenario-schema.ts';
import { phaseFailures, scenarioFailures } from '../engine/failures.ts';
import type { PhaseResult, ScenarioResult } from '../engine/results.ts';
import { observationOf, runLab, runScenario, type PhasePlan, type ScenarioRunOptions } from '../engine/run-scenario.ts';
import { matchExpectation } from '../expect/match-expectation.ts';

export interface MutantResult {
  scenario: string;
  mutation: string;
  killed: boolean;
  /** Killed: what failed. Survived: why nothing did. */
  reason: string;
}

export type MutateOptions = Pick<ScenarioRunOptions, 'provider' | 'signal'> & {
  /** A run of the unmutated scenario already made (the suite's): reused instead of running it again. */
  original?: ScenarioResult;
  onMutant?: (m: MutantResult) => void;
};

const quiet = () => {};

/** A scenario result to collect a mutant lab's phases in. */
function emptyResult(scenario: Scenario): ScenarioResult {
  return { id: scenario.id, title: scenario.title, file: '', verdict: 'passed', durationMs: 0, phases: [], labs: [], log: [], addresses: {} };
}

export async function mutateScenario(loaded: LoadedScenario, options: MutateOptions): Promise<MutantResult[]> {
  const { scenario } = loaded;
  const report = (m: MutantResult) => (options.onMutant?.(m), m);
  const original = options.original ?? (await runScenario(loaded, { ...options, emit: quiet }));
  if (original.verdict !== 'passed' && original.verdict !== 'measured') {
    const why = scenarioFailures(original)[0] ?? original.skipReason ?? original.verdict;
    return [report({ scenario: scenario.id, mutation: 'original', killed: false, reason: `the scenario itself did not pass (${why}): its mutants cannot be judged` })];
  }
  const results = swappedOutcomes(scenario, original).map(report);
  for (const m of await labMutants(scenario, options)) results.push(report(m));
  return results;
}

/** (c) Each faulted expectation with every other outcome, matched against the original observations. */
export function swappedOutcomes(scenario: Scenario, original: ScenarioResult): MutantResult[] {
  const faulted = original.phases.filter((p) => p.name === 'faulted');
  const address = (ref: string) => {
    const ip = original.addresses?.[ref];
    if (!ip) throw new HarnessError('LAB_FAILED', `the original run recorded no address for ${ref}`);
    return ip;
  };
  return Object.entries(scenario.fault.expect).map(([probe, expected]) => {
    const spec = typeof expected === 'string' ? { outcome: expected } : expected;
    const survivors: string[] = [];
    let example = '';
    for (const outcome of OUTCOMES.filter((o) => o !== spec.outcome)) {
      const swapped = { ...spec, outcome } as ExpectedSpec;
      const misses = faulted.flatMap((phase) => {
        const result = phase.probes.find((p) => p.id === probe);
        if (!result) return [];
        const match = matchExpectation(swapped, observationOf(result), address);
        return match.matched ? [] : [`${phase.variant}: ${match.mismatch}`];
      });
      if (misses.length === 0) survivors.push(outcome);
      else example ||= `as ${outcome}: ${misses[0]}`;
    }
    const mutation = `outcome-swapped:${probe}`;
    return survivors.length === 0
      ? { scenario: scenario.id, mutation, killed: true, reason: `all ${OUTCOMES.length - 1} other outcomes fail, e.g. ${example}` }
      : { scenario: scenario.id, mutation, killed: false, reason: `still holds with the outcome swapped to ${survivors.join(', ')}` };
  });
}

interface LabMutant {
  mutation: string;
  /** The phases of a lab of its own, should the shared lab not judge it. */
  alone: PhasePlan[];
}

/** (a) and (b): run in one shared lab where possible. */
async function labMutants(scenario: Scenario, options: MutateOptions): Promise<MutantResult[]> {
  const baseline: PhasePlan = { name: 'baseline', variant: 'mutants', spec: scenario.baseline };
  const fault: PhasePlan = { name: 'faulted', variant: 'mutants', spec: scenario.fault };
  const noFault: PhasePlan = { name: 'faulted', variant: 'fault-removed', spec: { ...scenario.fault, steps: [] } };
  const noFix = (fix: Scenario['fixes'][number]): PhasePlan => ({ name: 'fixed', variant: `fix-removed:${fix.name}`, spec: { ...fix, steps: [] } });
  const mutants: (LabMutant & { shared: number })[] = [
    { mutation: 'fault-removed', shared: 1, alone: [baseline, noFault] },
    ...scenario.fixes.map((fix, i) => ({ mutation: `fix-removed:${fix.name}`, shared: 3 + i, alone: [baseline, fault, noFix(fix)] })),
  ];
  const shared = emptyResult(scenario);
  const runOptions: ScenarioRunOptions = { provider: options.provider, signal: options.signal, emit: quiet };
  await runLab(scenario, 'mutants', [baseline, noFault, fault, ...scenario.fixes.map(noFix)], shared, runOptions).catch(rethrowAbort);
  const [sharedBaseline, , sharedFault] = shared.phases;
  const results: MutantResult[] = [];
  for (const m of mutants) {
    const phase = shared.phases[m.shared];
    // judged in the shared lab only when everything it rests on held there
    const judged = sharedBaseline?.status === 'passed' && phase && phase.status !== 'errored' && (m.shared === 1 || sharedFault?.status === 'passed');
    results.push(judged ? verdictOf(scenario.id, m.mutation, [phase]) : await alone(scenario, m, runOptions));
  }
  return results;
}

async function alone(scenario: Scenario, m: LabMutant, options: ScenarioRunOptions): Promise<MutantResult> {
  const result = emptyResult(scenario);
  let error: unknown;
  await runLab(scenario, m.mutation, m.alone, result, options).catch((e: unknown) => {
    rethrowAbort(e);
    error = e;
  });
  // an error outside every phase (the lab did not come up) judges nothing
  if (error && !result.phases.some((p) => p.status === 'errored')) {
    return { scenario: scenario.id, mutation: m.mutation, killed: false, reason: `not judged: ${(error as Error).message.split('\n')[0]}` };
  }
  return verdictOf(scenario.id, m.mutation, result.phases);
}

/** Killed when any phase of the mutant's run did not hold (the run would exit 1). */
function verdictOf(scenario: string, mutation: string, phases: readonly PhaseResult[]): MutantResult {
  const failures = phases.flatMap(phaseFailures);
  if (failures.length > 0) return { scenario, mutation, killed: true, reason: failures[0]!.split('\n')[0]! };
  const probes = phases.at(-1)?.probes.map((p) => p.summary) ?? [];
  return { scenario, mutation, killed: false, reason: `every expectation and check still held: ${probes.join('; ') || 'no probes'}` };
}

function rethrowAbort(e: unknown): void {
  if (e instanceof HarnessError && e.code === 'ABORTED') throw e;
  // any other error is recorded on the phase it happened in; the mutant is judged from there
}

/** The share of mutants killed, 0..1 (1 when there are none). */
export function killRate(mutants: readonly MutantResult[]): number {
  return mutants.length === 0 ? 1 : mutants.filter((m) => m.killed).length / mutants.length;
}
