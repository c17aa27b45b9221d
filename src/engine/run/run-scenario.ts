// One scenario: for each fix variant a fresh lab runs
//   provision -> baseline -> inject -> faulted -> fix -> fixed -> evidence -> teardown,
// with teardown on every path (mismatch, error, abort).
import { join, resolve } from 'node:path';
import type { ClusterProvider, StartedCluster } from '../../contract/provider.ts';
import { unrunnableFixes, unsupported } from '../../contract/provider-support.ts';
import { collectPhaseEvidence } from '../../observe/evidence/collect-evidence.ts';
import { matchExpectation } from '../../observe/expect/match-expectation.ts';
import { PhaseChecks } from '../../observe/expect/run-checks.ts';
import { FaultPath } from '../../observe/expect/fault-path.ts';
import { errorFields, HarnessError } from '../../model/errors.ts';
import type { LoadedScenario } from '../../model/load-scenario.ts';
import type { Observation } from '../../model/outcome.ts';
import type { CheckSpec, ExpectedSpec, ProbeSpec, Scenario, StepSpec } from '../../model/scenario-schema.ts';
import { AheadWatches } from '../../observe/probes/ahead-watches.ts';
import { runProbe } from '../../observe/probes/run-probe.ts';
import { attachDiagnoses, probeFlows, startProbeTrace, traceProbe } from './probe-trace-hooks.ts';
import type { Command } from '../../model/lab-action.ts';
import { placeholderResolver } from '../../model/placeholders.ts';
import { describeLabAction, expandStep } from '../../model/steps/registry.ts';
import type { PhaseName, PhaseResult, ProbeResult, RunEvent, ScenarioResult, StepResult } from './results.ts';
import { runForegroundStep, startBackgroundStep, StepFailedError } from './run-steps.ts';
import { newRunId, runPrefix } from '../../contract/run-id.ts';
import { inSlots, LabSlots } from './lab-slots.ts';

export interface ScenarioRunOptions {
  provider: ClusterProvider;
  /** Evidence goes to <reportDir>/<scenario id>/...; no evidence when undefined. */
  reportDir?: string;
  signal: AbortSignal;
  emit: (event: RunEvent) => void;
  /** Leave the lab up after the run (for poking at it by hand); `netrepro clean` removes it. */
  keep?: boolean;
  /** Susceptibility: one lab, baseline and fault only, no fix (the regression gate). */
  faultOnly?: boolean;
  /** How many of the scenario's fix variants run at once (each in its own lab); without, one at a time. */
  slots?: LabSlots;
  /**
   * The last phase to run: `baseline`, `faulted` (one lab, the first fix variant's) or a fix's name (that fix's lab
   * only); with `keep`, the lab stays in that phase's state (for `netrepro capture --run`).
   */
  stopAfter?: string;
}

/** The fix variants whose labs run, and the phases each runs, under `stopAfter`. */
export function stopAfterPlan(
  scenario: Scenario,
  runnable: readonly Scenario['fixes'][number][],
  stopAfter: string | undefined,
): { fixes: Scenario['fixes'][number][]; phases: number } {
  if (stopAfter === undefined) return { fixes: [...runnable], phases: 3 };
  if (stopAfter === 'faulted' && scenario.purpose === 'replay')
    throw new HarnessError(
      'USAGE',
      `--stop-after faulted: scenario ${scenario.id} is a replay, whose captured state is its baseline: it has no faulted phase`,
      `baseline${scenario.fixes.length ? ` or a fix: ${scenario.fixes.map((f) => f.name).join(', ')}` : ''}`,
    );
  if (stopAfter === 'baseline' || stopAfter === 'faulted')
    return { fixes: runnable.slice(0, 1), phases: stopAfter === 'baseline' ? 1 : 2 };
  const fix = runnable.find((f) => f.name === stopAfter);
  if (!fix) {
    const why = scenario.fixes.some((f) => f.name === stopAfter)
      ? `its fix ${stopAfter} cannot run on this provider`
      : `it has no fix ${stopAfter}`;
    throw new HarnessError(
      'USAGE',
      `--stop-after ${stopAfter}: ${why} (scenario ${scenario.id})`,
      `baseline, faulted or a fix: ${scenario.fixes.map((f) => f.name).join(', ')}`,
    );
  }
  return { fixes: [fix], phases: 3 };
}

export async function runScenario(
  { file, scenario }: LoadedScenario,
  options: ScenarioRunOptions,
): Promise<ScenarioResult> {
  const started = performance.now();
  const result: ScenarioResult = {
    id: scenario.id,
    title: scenario.title,
    file,
    verdict: 'passed',
    durationMs: 0,
    phases: [],
    labs: [],
    log: [],
    addresses: {},
  };
  // absolute: evidence commands may run in another mount namespace (the bpffs holder's), whose cwd is /
  if (options.reportDir) result.evidenceDir = resolve(options.reportDir, scenario.id);
  options.emit({ kind: 'scenario-start', id: scenario.id, title: scenario.title });
  try {
    // what the provider cannot do is known from the file: skipped at once, before any provisioning
    const skip = unsupported(options.provider, scenario);
    if (skip) throw new HarnessError('UNSUPPORTED', skip.reason, skip.hint);
    const skippedFixes = unrunnableFixes(options.provider, scenario);
    if (skippedFixes.length > 0 && !options.faultOnly) result.skippedFixes = skippedFixes;
    const runnable = scenario.fixes.filter((f) => !skippedFixes.some((s) => s.fix === f.name));
    // each fix variant builds its own lab: they run side by side, as many as the slots allow,
    // each into its own part of the result, put together in the scenario's order
    const plan = stopAfterPlan(scenario, runnable, options.stopAfter);
    // a replay without a fix yet runs its baseline, the captured incident, in one lab
    const asCaptured = scenario.purpose === 'replay' && plan.fixes.length === 0 ? [AS_CAPTURED] : [];
    const fixes = options.faultOnly ? runnable.slice(0, 1) : [...plan.fixes, ...asCaptured];
    const parts = fixes.map(() => ({
      ...result,
      phases: [] as PhaseResult[],
      labs: [] as ScenarioResult['labs'],
      log: [] as string[],
    }));
    try {
      await inSlots(fixes, options.slots ?? new LabSlots(1), options.signal, (fix, i) =>
        runVariant(scenario, fix, parts[i]!, options, plan.phases),
      );
    } finally {
      for (const part of parts) {
        result.phases.push(...part.phases);
        result.labs.push(...part.labs);
        result.log.push(...part.log);
      }
    }
    const held = result.phases.every((p) => p.status === 'passed');
    result.verdict = !held ? 'failed' : scenario.purpose === 'measure' ? 'measured' : 'passed';
    if (scenario.purpose === 'measure') result.measurements = measurements(result);
  } catch (e) {
    if (e instanceof HarnessError && e.code === 'ABORTED') throw e;
    const err = errorFields(e);
    if (err.code === 'UNSUPPORTED') {
      result.verdict = 'skipped';
      result.skipReason = err.message;
    } else {
      result.verdict = 'errored';
      result.error = err;
    }
  }
  result.durationMs = Math.round(performance.now() - started);
  options.emit({ kind: 'scenario-end', result });
  return result;
}

/** What a measurement run measured: each repeated probe's distribution and each counter's change, per phase. */
function measurements(result: ScenarioResult): string[] {
  return result.phases.flatMap((p) => [
    ...p.probes
      .filter((x) => x.detail.distribution !== undefined)
      .map((x) => `${p.variant}/${p.name}/${x.id}: ${x.summary}`),
    ...p.checks
      .filter((c) => c.observed.startsWith('delta'))
      .map((c) => `${p.variant}/${p.name}/${c.id}: ${c.observed}`),
  ]);
}

/** The lab of a replay with no fix yet: its baseline alone. */
const AS_CAPTURED: Scenario['fixes'][number] = { name: 'captured', steps: [], expect: {}, checks: [] };

/** One phase of a lab's run: which phase, for which variant, and what it does and expects. */
export interface PhasePlan {
  name: PhaseName;
  variant: string;
  spec: { steps?: StepSpec[]; expect: Scenario['baseline']['expect']; checks: CheckSpec[]; title?: string };
}

/** A fix variant's lab: baseline, fault, then the fix (the gate stops after the fault). */
async function runVariant(
  scenario: Scenario,
  fix: Scenario['fixes'][number],
  result: ScenarioResult,
  options: ScenarioRunOptions,
  phases: number,
): Promise<void> {
  // a replay's captured state is its fault: its fix follows the baseline
  const replay = scenario.purpose === 'replay';
  const plan: PhasePlan[] = [
    { name: 'baseline' as const, variant: fix.name, spec: scenario.baseline },
    ...(replay ? [] : [{ name: 'faulted' as const, variant: fix.name, spec: scenario.fault }]),
    ...(options.faultOnly || fix === AS_CAPTURED ? [] : [{ name: 'fixed' as const, variant: fix.name, spec: fix }]),
  ].slice(0, phases);
  await runLab(scenario, fix.name, plan, result, options);
}

/**
 * One fresh lab running `plan` phase after phase, torn down on every path. The first phase that errors
 * ends the lab's run (its error is thrown); results accumulate in `result`.
 */
export async function runLab(
  scenario: Scenario,
  label: string,
  plan: readonly PhasePlan[],
  result: ScenarioResult,
  options: ScenarioRunOptions,
): Promise<void> {
  const runId = newRunId();
  const log = (line: string) => result.log.push(`[${label}] ${line}`);
  const t0 = performance.now();
  const cluster = await options.provider.provision(scenario.topology, {
    runId,
    prefix: runPrefix(runId),
    signal: options.signal,
    log,
  });
  const lab = { variant: label, runId, provisionMs: Math.round(performance.now() - t0), teardownMs: 0 };
  result.labs.push(lab);
  options.emit({ kind: 'lab-ready', id: scenario.id, variant: label, ms: lab.provisionMs });
  // background steps (a trigger that keeps firing) run in their phase and every later one of this lab
  const background: Command[] = [];
  try {
    for (const phase of plan) {
      const { steps = [], expect, checks, title } = phase.spec;
      await runPhase({
        scenario,
        cluster,
        name: phase.name,
        variant: phase.variant,
        steps,
        expect,
        checks,
        title,
        options,
        result,
        background,
      });
    }
  } finally {
    const t1 = performance.now();
    if (options.keep) {
      await cluster.markKept?.();
      log(`kept: lab ${runId} stays up; remove it with \`netrepro clean --run ${runId}\``);
    } else await cluster.destroy();
    lab.teardownMs = Math.round(performance.now() - t1);
  }
}

/** One phase to run in a started lab, and where its results go. */
interface PhaseInput {
  /** The scenario the phase belongs to. */
  scenario: Scenario;
  /** The lab it runs in. */
  cluster: StartedCluster;
  /** baseline, faulted or fixed. */
  name: PhaseName;
  /** The fix (or mutant) whose lab this is. */
  variant: string;
  /** The phase's steps: foreground ones run first, background ones alongside its probes. */
  steps: StepSpec[];
  /** What each probe must observe. */
  expect: Scenario['baseline']['expect'];
  /** Evidence read before and after the probes. */
  checks: CheckSpec[];
  title?: string;
  options: ScenarioRunOptions;
  /** The scenario's result, which the phase's result is added to. */
  result: ScenarioResult;
  /** Background commands of earlier phases; this phase's are added to it. */
  background: Command[];
}

/** A phase in progress: its result, and how its steps and events are recorded. */
interface RunningPhase extends PhaseInput {
  phase: PhaseResult;
  resolve: (ref: string) => string;
  stepDone: (step: StepResult) => void;
}

async function runPhase(input: PhaseInput): Promise<void> {
  const { scenario, cluster, options } = input;
  const started = performance.now();
  const phase: PhaseResult = {
    name: input.name,
    variant: input.variant,
    title: input.title,
    steps: [],
    probes: [],
    checks: [],
    durationMs: 0,
    status: 'passed',
  };
  input.result.phases.push(phase);
  options.emit({ kind: 'phase-start', id: scenario.id, phase: input.name, variant: input.variant, title: input.title });
  const p: RunningPhase = {
    ...input,
    phase,
    resolve: placeholderResolver(cluster),
    stepDone: (step) => {
      phase.steps.push(step);
      options.emit({ kind: 'step', id: scenario.id, phase: input.name, variant: input.variant, step });
    },
  };
  const evidenceDir =
    input.result.evidenceDir &&
    join(input.result.evidenceDir, scenario.fixes.length > 1 ? input.variant : '', input.name);
  try {
    await collectPhaseEvidence(cluster, evidenceDir, scenario.evidence, async () => {
      // a change traffic must survive proves something only where the probes cross it
      const faultPath =
        input.name === 'faulted' && scenario.purpose === 'preserve' ? new FaultPath(cluster) : undefined;
      await faultPath?.read();
      await runForegroundSteps(p);
      await faultPath?.read(true);
      const checks = new PhaseChecks(p.checks, cluster, p.resolve);
      // the probes' packet watches start now, after the steps (which may replace an interface), while the checks read
      const ahead = new AheadWatches(phaseProbes(p), cluster);
      await checks.start().catch(async (e: unknown) => {
        await ahead.stop();
        throw e;
      });
      await alongsideBackgroundSteps(p, checks, ahead, () => runProbes(p, ahead));
      const finished = await checks.finish();
      await faultPath?.read();
      for (const check of [...finished, ...(faultPath ? [faultPath.verdict()] : [])]) {
        phase.checks.push(check);
        options.emit({ kind: 'check', id: scenario.id, phase: input.name, variant: input.variant, check });
      }
      // after the checks, whose evidence it cites
      attachDiagnoses(phase, (ref) => cluster.address(ref), baselineOf(input.result, input));
    });
    phase.status = phase.probes.every((x) => x.matched) && phase.checks.every((c) => c.matched) ? 'passed' : 'failed';
  } catch (e) {
    const err = errorFields(e);
    phase.status = 'errored';
    if (err.code !== 'ABORTED') phase.error = err;
    if (e instanceof StepFailedError) p.stepDone(e.step);
    throw e;
  } finally {
    phase.durationMs = Math.round(performance.now() - started);
  }
}

/** The phase's steps in order; a background command is kept for the probes (of this phase and every later one). */
async function runForegroundSteps(p: RunningPhase): Promise<void> {
  for (const step of p.steps) {
    for (const action of expandStep(step, p.resolve)) {
      if (action.kind === 'command' && action.background) p.background.push(action);
      else p.stepDone(await runForegroundStep(p.cluster, action, describeLabAction, p.options.signal));
    }
  }
}

/**
 * Runs `probes` while the background steps run, after their longest lead; every background step is then
 * awaited and judged, also when a probe threw, and one that failed is the phase's error.
 */
async function alongsideBackgroundSteps(
  p: RunningPhase,
  checks: PhaseChecks,
  ahead: AheadWatches,
  probes: () => Promise<void>,
): Promise<void> {
  const running = p.background.map((command) => startBackgroundStep(p.cluster, command, p.options.signal));
  try {
    if (running.length > 0) await sleep(Math.max(...running.map((r) => r.command.background!.leadMs)));
    await probes();
  } finally {
    await ahead.stop();
    const judged = await Promise.allSettled(running.map((r) => r.finish()));
    for (const j of judged) if (j.status === 'fulfilled') p.stepDone(j.value);
    const failed = judged.find((j) => j.status === 'rejected');
    if (failed) {
      await checks.finish().catch(() => {});
      // biome-ignore lint/correctness/noUnsafeFinally: a background step that failed is the phase's error, before a probe's
      throw failed.reason;
    }
  }
}

/** The probes a phase expects something of, in the order of the scenario's `probes:` list. */
function phaseProbes(p: PhaseInput): ProbeSpec[] {
  return p.scenario.probes.filter((x) => Object.hasOwn(p.expect, x.id));
}

/** The phase's probes, one at a time: each traced, each keeping the packets captured from its own start on. */
async function runProbes(p: RunningPhase, ahead: AheadWatches): Promise<void> {
  const { scenario, cluster, options } = p;
  for (const spec of phaseProbes(p)) {
    const { id } = spec;
    const expected = p.expect[id]!;
    // an attributed drop of this probe's packets ends it early
    const trace = traceProbe(await startProbeTrace(cluster, probeFlows(spec, cluster), options.signal));
    const observation = await trace.run((dropped) =>
      runProbe({ spec, cluster, signal: options.signal, dropped, ahead }),
    );
    const probe = probeResult(
      id,
      expected,
      observation,
      (ref) => ((p.result.addresses ??= {})[ref] = cluster.address(ref)),
    );
    if (scenario.purpose === 'preserve' && p.name === 'faulted') mustCrossTheWire(probe);
    // keeps the trace of a faulted or failing probe
    const earlier = (name: PhaseName) =>
      p.result.phases.find((x) => x.name === name && x.variant === p.variant)?.probes.find((b) => b.id === id);
    await trace.finish(
      probe,
      p.name === 'baseline'
        ? {}
        : { baseline: earlier('baseline'), faulted: p.name === 'fixed' ? earlier('faulted') : undefined },
    );
    p.phase.probes.push(probe);
    options.emit({ kind: 'probe', id: scenario.id, phase: p.name, variant: p.variant, probe });
  }
}

/** The baseline phase of the lab `phase` runs in (none for the baseline itself). */
function baselineOf(result: ScenarioResult, phase: { name: PhaseName; variant: string }): PhaseResult | undefined {
  if (phase.name === 'baseline') return undefined;
  return result.phases.find((p) => p.name === 'baseline' && p.variant === phase.variant);
}

/** A probe's result: its observation matched against the phase's expectation. */
export function probeResult(
  id: string,
  expected: ExpectedSpec,
  observation: Observation,
  address: (ref: string) => string,
): ProbeResult {
  const match = matchExpectation(expected, observation, address);
  return {
    id,
    expected: match.expected,
    observed: observation.outcome,
    matched: match.matched,
    mismatch: match.mismatch,
    summary: observation.summary,
    durationMs: observation.durationMs,
    detail: {
      ...observation.detail,
      servedBy: observation.servedBy,
      clientAddress: observation.clientAddress,
      source: observation.source,
      connected: observation.connected,
      sentTo: observation.sentTo,
      answers: observation.answers,
    },
  };
}

/**
 * A change traffic must survive is shown only by traffic that went where the change is: a faulted probe of a
 * preserve scenario none of whose packets the client's interface captured (its traffic stayed on the pod's
 * loopback, say) proves nothing about it, and fails as unobserved.
 */
function mustCrossTheWire(probe: ProbeResult): void {
  const packets = probe.detail.packets;
  if (!probe.matched || !Array.isArray(packets) || packets.length > 0) return;
  probe.matched = false;
  probe.mismatch = `unobserved: none of the probe's packets was captured on the client's interface, so it cannot show that traffic survives the fault: ${probe.summary}`;
}

/** The observation behind a probe result, as recorded: lets an expectation be judged again without a lab. */
export function observationOf(probe: ProbeResult): Observation {
  const { servedBy, clientAddress, source, connected, sentTo, answers, ...detail } = probe.detail;
  return {
    outcome: probe.observed,
    summary: probe.summary,
    servedBy,
    clientAddress,
    source,
    connected,
    sentTo,
    answers,
    durationMs: probe.durationMs,
    detail,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
