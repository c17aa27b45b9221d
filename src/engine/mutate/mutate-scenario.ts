// Mutation testing for scenarios: is each verdict falsifiable? A mutant changes the scenario the way a
// broken reproduction would look (the fault never applied, a fix never applied, the symptom expected
// wrongly); the scenario must then fail. A mutant that still passes shows an expectation or check that
// cannot tell the difference.
//   fault-removed                  every fault step removed (background ones too): some assertion must fail
//   fix-removed:NAME               that fix's steps removed (for a negative control: its own check must notice)
//   outcome-swapped:ID             the faulted expectation of probe ID with every other outcome in turn
//   needs-fault:ID, needs-fault:check/ID
//                                  each faulted expectation and check that differs from the baseline must
//                                  fail on its own once the fault is removed (a bound wide enough to hold
//                                  either way survives); a check marked `control: true` is exempt
//   needs-fix:NAME/ID, needs-fix:NAME/check/ID
//                                  the same for what a fix asserts beyond the faulted phase, with that fix removed
//   control-holds:WHERE/ID         a check marked `control: true` must still hold with the fault (or the fix)
//                                  removed: one that fails there carried the symptom and must be asserted
//   reported-moves:fault/ID        a number the fault only reports must not be there with the fault and not
//                                  without it (or the other way round): that is a symptom, to be asserted
//   absence-matches:WHERE/ID       an absence (count 0, delta 0, max 0) proves something only where its pattern
//                                  matches in some phase of some variant: the original run's or a mutant's
// outcome-swapped needs no lab: it is judged on the original run's observations. Each removal runs in a lab of
// its own with the original's history, so that whatever accumulates in a lab reads as it does there.
import { HarnessError } from '../../model/errors.ts';
import { assertedBeyond } from '../../model/falsifiable.ts';
import type { LoadedScenario } from '../../model/load-scenario.ts';
import { OUTCOMES } from '../../model/outcome.ts';
import type { CheckSpec, ExpectedSpec, Scenario } from '../../model/scenario-schema.ts';
import { phaseFailures, scenarioFailures } from '../run/failures.ts';
import type { PhaseResult, ScenarioResult } from '../run/results.ts';
import { observationOf, runLab, runScenario, type PhasePlan, type ScenarioRunOptions } from '../run/run-scenario.ts';
import { matchExpectation } from '../../observe/expect/match-expectation.ts';

/** killed: the scenario failed, as it must; survived: it still passed; not-judged: the run could not tell. */
export type MutantStatus = 'killed' | 'survived' | 'not-judged';

export interface MutantResult {
  scenario: string;
  mutation: string;
  status: MutantStatus;
  killed: boolean;
  /** Killed: what failed. Survived: why nothing did. Not judged: why the run could not tell. */
  reason: string;
}

/** A scenario's mutants, or why none could be judged: the unmutated scenario itself did not pass. */
export interface ScenarioMutants {
  scenario: string;
  originalFailure?: string;
  mutants: MutantResult[];
  /** Labs run again once because a phase before the one judged did not hold (load, mostly): what failed first. */
  retries: Retry[];
}

export interface Retry {
  scenario: string;
  /** The removal's mutation whose lab ran again. */
  lab: string;
  /** What did not hold in the first lab. */
  first: string;
  /** Whether the second lab's history held, so its mutants were judged. */
  judged: boolean;
}

export type MutateOptions = Pick<ScenarioRunOptions, 'provider' | 'signal'> & {
  /** A run of the unmutated scenario already made (the suite's): reused instead of running it again. */
  original?: ScenarioResult;
  onMutant?: (m: MutantResult) => void;
};

const quiet = () => {};
const mutant = (scenario: string, mutation: string, status: MutantStatus, reason: string): MutantResult => ({
  scenario,
  mutation,
  status,
  killed: status === 'killed',
  reason,
});

/** A scenario result to collect a mutant lab's phases in. */
function emptyResult(scenario: Scenario): ScenarioResult {
  return {
    id: scenario.id,
    title: scenario.title,
    file: '',
    verdict: 'passed',
    durationMs: 0,
    phases: [],
    labs: [],
    log: [],
    addresses: {},
  };
}

export async function mutateScenario(loaded: LoadedScenario, options: MutateOptions): Promise<ScenarioMutants> {
  const { scenario } = loaded;
  const report = (m: MutantResult) => (options.onMutant?.(m), m);
  const retries: Retry[] = [];
  const original = options.original ?? (await runScenario(loaded, { ...options, emit: quiet }));
  if (original.verdict !== 'passed' && original.verdict !== 'measured') {
    const why = scenarioFailures(original)[0] ?? original.skipReason ?? original.verdict;
    const reason = `not judged: the scenario itself did not pass (${why.split('\n')[0]})`;
    return {
      scenario: scenario.id,
      originalFailure: why,
      mutants: plannedMutants(scenario).map((m) => report(mutant(scenario.id, m, 'not-judged', reason))),
      retries,
    };
  }
  const results = swappedOutcomes(scenario, original).map(report);
  const removals = await removalRuns(scenario, options, retries);
  for (const m of removals.mutants) results.push(report(m));
  for (const m of absences(scenario, [...original.phases, ...removals.phases])) results.push(report(m));
  for (const m of reportedMoves(scenario, original.phases, removals.phases)) results.push(report(m));
  return { scenario: scenario.id, mutants: results, retries };
}

/**
 * A number the fault reports (`report: true`) that is there with the fault and not without it (or the other
 * way round) moves as a symptom does: reporting it lets a run without the symptom pass, so it must be asserted.
 */
export function reportedMoves(
  scenario: Scenario,
  original: readonly PhaseResult[],
  removed: readonly PhaseResult[],
): MutantResult[] {
  const without = removed.find((p) => p.name === 'faulted' && p.variant === 'fault-removed');
  const faulted = original.filter((p) => p.name === 'faulted');
  return scenario.fault.checks
    .filter((c) => c.report)
    .map((c) => {
      const mutation = `reported-moves:fault/${c.id}`;
      const bare = without?.checks.find((r) => r.id === c.id)?.value;
      const withFault = faulted.map((p) => p.checks.find((r) => r.id === c.id)?.value);
      if (bare === undefined || withFault.some((v) => v === undefined))
        return mutant(scenario.id, mutation, 'not-judged', `not judged: ${c.id} was not read in every run`);
      const values = withFault as number[];
      const moves = bare === 0 ? values.every((v) => v > 0) : values.every((v) => v === 0);
      return moves
        ? mutant(
            scenario.id,
            mutation,
            'survived',
            `reported, but it carries the fault: ${values.join(', ')} with it, ${bare} without it; assert it`,
          )
        : mutant(
            scenario.id,
            mutation,
            'killed',
            `it does not come and go with the fault (${values.join(', ')} with it, ${bare} without)`,
          );
    });
}

/** The name of every mutant of `scenario`, as `mutateScenario` judges them. */
export function plannedMutants(scenario: Scenario): string[] {
  return [
    ...Object.keys(scenario.fault.expect).map((id) => `outcome-swapped:${id}`),
    ...removals(scenario).flatMap((r) => [r.mutation, ...r.items.map((i) => i.mutation)]),
    ...absenceChecks(scenario).map((a) => a.mutation),
    ...scenario.fault.checks.filter((c) => c.report).map((c) => `reported-moves:fault/${c.id}`),
  ];
}

/** Each faulted expectation with every other outcome, matched against the original observations. */
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
    const allowed: readonly string[] = Array.isArray(spec.outcome) ? spec.outcome : [spec.outcome];
    for (const outcome of OUTCOMES.filter((o) => !allowed.includes(o))) {
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
      ? mutant(scenario.id, mutation, 'killed', `all ${OUTCOMES.length - 1} other outcomes fail, e.g. ${example}`)
      : mutant(scenario.id, mutation, 'survived', `still holds with the outcome swapped to ${survivors.join(', ')}`);
  });
}

/** One assertion that must fail on its own once the steps are removed. */
interface Item {
  mutation: string;
  /** probe, check: must fail without the steps; control: a `control: true` check, which must still hold. */
  kind: 'probe' | 'check' | 'control';
  id: string;
}

/** A removal (the fault, or one fix), the phases of its lab, and what must fail without its steps. */
interface Removal {
  mutation: string;
  plan: PhasePlan[];
  items: Item[];
}

function removals(scenario: Scenario): Removal[] {
  const baseline: PhasePlan = { name: 'baseline', variant: 'mutants', spec: scenario.baseline };
  const fault: PhasePlan = { name: 'faulted', variant: 'mutants', spec: scenario.fault };
  const noFault: PhasePlan = { name: 'faulted', variant: 'fault-removed', spec: { ...scenario.fault, steps: [] } };
  const noFix = (fix: Scenario['fixes'][number]): PhasePlan => ({
    name: 'fixed',
    variant: `fix-removed:${fix.name}`,
    spec: { ...fix, steps: [] },
  });
  const items = (
    prefix: string,
    beyond: { probes: string[]; checks: string[] },
    checks: readonly CheckSpec[],
    where: string,
  ): Item[] => [
    // a measurement's probes are its load, not a symptom: only its checks must depend on the steps
    ...(scenario.purpose === 'measure'
      ? []
      : beyond.probes.map((id) => ({ mutation: `${prefix}${id}`, kind: 'probe' as const, id }))),
    ...beyond.checks.map((id) => ({ mutation: `${prefix}check/${id}`, kind: 'check' as const, id })),
    // a control holds whether the steps ran or not: one that fails without them carried the symptom
    ...checks
      .filter((c) => c.control)
      .map((c) => ({ mutation: `control-holds:${where}/${c.id}`, kind: 'control' as const, id: c.id })),
  ];
  return [
    {
      mutation: 'fault-removed',
      plan: [baseline, noFault],
      items: items('needs-fault:', assertedBeyond(scenario.fault, scenario.baseline), scenario.fault.checks, 'fault'),
    },
    ...scenario.fixes.map((fix) => ({
      mutation: `fix-removed:${fix.name}`,
      plan: [baseline, fault, noFix(fix)],
      items: items(`needs-fix:${fix.name}/`, assertedBeyond(fix, scenario.fault), fix.checks, `fix:${fix.name}`),
    })),
  ];
}

/** A removal's run: its last phase and all of them, or why it could not be judged. */
interface RemovalRun {
  phase?: PhaseResult;
  all: PhaseResult[];
  notJudged?: string;
  /** A phase before the judged one did not hold, as it did in the original run. */
  historyBroken?: boolean;
}

/**
 * Each removal in a lab of its own, with the history the original run has (baseline, then the fault when a
 * fix is removed): checks that count what accumulates in a lab (map entries, flows) read the same as there.
 * Their phases feed the absence mutants.
 */
async function removalRuns(
  scenario: Scenario,
  options: MutateOptions,
  retries: Retry[],
): Promise<{ mutants: MutantResult[]; phases: PhaseResult[] }> {
  const runOptions: ScenarioRunOptions = { provider: options.provider, signal: options.signal, emit: quiet };
  const mutants: MutantResult[] = [];
  const phases: PhaseResult[] = [];
  for (const r of removals(scenario)) {
    let run = await alone(scenario, r, runOptions);
    // a history phase that did not hold is retried once in a fresh lab before its mutants go unjudged
    if (run.historyBroken) {
      const first = run.notJudged!;
      run = await alone(scenario, r, runOptions);
      retries.push({ scenario: scenario.id, lab: r.mutation, first, judged: !run.notJudged });
    }
    phases.push(...run.all);
    mutants.push(...judge(scenario, r, run));
  }
  return { mutants, phases };
}

async function alone(scenario: Scenario, r: Removal, options: ScenarioRunOptions): Promise<RemovalRun> {
  const result = emptyResult(scenario);
  let error: unknown;
  await runLab(scenario, r.mutation, r.plan, result, options).catch((e: unknown) => {
    rethrowAbort(e);
    error = e;
  });
  // an error outside every phase (the lab did not come up) judges nothing
  if (error && !result.phases.some((p) => p.status === 'errored'))
    return { all: [], notJudged: `not judged: ${(error as Error).message.split('\n')[0]}` };
  // the removal is judged on its own phase, and only when the history before it held as in the original run
  const own = result.phases.length === r.plan.length ? result.phases.at(-1) : undefined;
  const broken = result.phases.slice(0, r.plan.length - 1).find((p) => p.status !== 'passed');
  if (broken)
    return {
      all: result.phases,
      notJudged: `not judged: its ${broken.variant}/${broken.name} did not hold (${phaseFailures(broken)[0]?.split('\n')[0] ?? broken.status})`,
      historyBroken: true,
    };
  return { phase: own, all: result.phases };
}

/** The removal's own mutant (a failure of its phase kills it) and each of its items (that one assertion must fail). */
function judge(scenario: Scenario, r: Removal, run: RemovalRun): MutantResult[] {
  if (run.notJudged || !run.phase) {
    const why = run.notJudged ?? 'not judged: the run ended before this phase';
    return [
      mutant(scenario.id, r.mutation, 'not-judged', why),
      ...r.items.map((i) => mutant(scenario.id, i.mutation, 'not-judged', why)),
    ];
  }
  const failures = phaseFailures(run.phase);
  const whole =
    failures.length > 0
      ? mutant(scenario.id, r.mutation, 'killed', failures[0]!.split('\n')[0]!)
      : mutant(
          scenario.id,
          r.mutation,
          'survived',
          `every expectation and check still held: ${run.phase.probes.map((p) => p.summary).join('; ') || 'no probes'}`,
        );
  const phase = run.phase;
  // the removed phase errored (a background step's check, say): nothing in it was judged item by item
  if (phase.status === 'errored')
    return [
      whole,
      ...r.items.map((i) => mutant(scenario.id, i.mutation, whole.status, `the phase errored: ${whole.reason}`)),
    ];
  const without = r.mutation.startsWith('fault') ? 'the fault' : 'the fix';
  return [
    whole,
    ...r.items.map((i) => {
      const result =
        i.kind === 'probe' ? phase.probes.find((p) => p.id === i.id) : phase.checks.find((c) => c.id === i.id);
      if (result && i.kind === 'control') {
        // a control is a check
        const seen = `expected ${result.expected}, observed ${result.observed}`;
        return result.matched
          ? mutant(scenario.id, i.mutation, 'killed', `holds without ${without} too, as a control does: ${seen}`)
          : mutant(
              scenario.id,
              i.mutation,
              'survived',
              `control check ${i.id} fails without ${without} (${seen}): it carries the symptom, so assert it (drop \`control: true\`)`,
            );
      }
      if (!result)
        return mutant(
          scenario.id,
          i.mutation,
          'not-judged',
          `not judged: ${i.kind} ${i.id} has no result in the phase`,
        );
      const seen = 'summary' in result ? result.summary : `expected ${result.expected}, observed ${result.observed}`;
      if (!result.matched) return mutant(scenario.id, i.mutation, 'killed', `without ${without}: ${seen}`);
      const hint =
        i.kind === 'check' ? ' (mark it `control: true` if it proves something else, such as that the probes ran)' : '';
      return mutant(
        scenario.id,
        i.mutation,
        'survived',
        `still holds without ${without}: ${seen}; it does not depend on it${hint}`,
      );
    }),
  ];
}

/** An absence bound: nothing may match (count 0), the counter may not rise (delta 0), or at most 0. */
const isAbsence = (c: CheckSpec) => {
  const range = c.expect?.count ?? c.expect?.delta;
  return range !== undefined && (typeof range === 'number' ? range === 0 : range.max === 0);
};

/** What a check reads, whatever its bound: the same command on the same machine, the same pattern. */
const readsKey = (c: CheckSpec) => JSON.stringify([c.on, c.cmd ?? c.snat, c.matches ?? c.counter]);

/** Every phase's checks by name, as the phases of any run (original or mutant) name them. */
function phaseChecks(scenario: Scenario, phase: PhaseResult): readonly CheckSpec[] {
  if (phase.name === 'baseline') return scenario.baseline.checks;
  if (phase.name === 'faulted') return scenario.fault.checks;
  const fix = scenario.fixes.find((f) => phase.variant === f.name || phase.variant === `fix-removed:${f.name}`);
  return fix?.checks ?? [];
}

function absenceChecks(scenario: Scenario): { mutation: string; key: string; check: CheckSpec }[] {
  const where: [string, readonly CheckSpec[]][] = [
    ['baseline', scenario.baseline.checks],
    ['fault', scenario.fault.checks],
    ...scenario.fixes.map((f): [string, readonly CheckSpec[]] => [`fix ${f.name}`, f.checks]),
  ];
  const seen = new Set<string>();
  return where.flatMap(([name, checks]) =>
    checks.filter(isAbsence).flatMap((check) => {
      const key = readsKey(check);
      if (seen.has(key)) return [];
      seen.add(key);
      return [{ mutation: `absence-matches:${name.replace(' ', ':')}/${check.id}`, key, check }];
    }),
  );
}

/** Each absence's pattern must match (a nonzero count or change) in some phase of some run. */
function absences(scenario: Scenario, phases: readonly PhaseResult[]): MutantResult[] {
  return absenceChecks(scenario).map(({ mutation, key, check }) => {
    const hit = phases.flatMap((phase) => {
      const specs = phaseChecks(scenario, phase);
      return phase.checks
        .filter(
          (c) => c.value !== undefined && c.value !== 0 && specs.some((s) => s.id === c.id && readsKey(s) === key),
        )
        .map((c) => `${phase.variant}/${phase.name}: ${c.observed}`);
    });
    const pattern = check.matches ?? check.counter ?? JSON.stringify(check.snat);
    return hit.length > 0
      ? mutant(
          scenario.id,
          mutation,
          'killed',
          `/${pattern}/ matches where the fault or another phase puts it: ${hit[0]}`,
        )
      : mutant(
          scenario.id,
          mutation,
          'survived',
          `this pattern never matches in any phase of any variant (/${pattern}/): its absence proves nothing`,
        );
  });
}

function rethrowAbort(e: unknown): void {
  if (e instanceof HarnessError && e.code === 'ABORTED') throw e;
  // any other error is recorded on the phase it happened in; the mutant is judged from there
}

/** The share of judged mutants killed, 0..1 (1 when none was judged). */
export function killRate(mutants: readonly MutantResult[]): number {
  const judged = mutants.filter((m) => m.status !== 'not-judged');
  return judged.length === 0 ? 1 : judged.filter((m) => m.killed).length / judged.length;
}
