// One scenario: for each fix variant a fresh lab runs
//   provision -> baseline -> inject -> faulted -> fix -> fixed -> evidence -> teardown,
// with teardown on every path (mismatch, error, abort).
import { join, resolve } from 'node:path';
import type { ClusterProvider, StartedCluster } from '../../clusters/provider.ts';
import { collectPhaseEvidence } from '../evidence/collect-evidence.ts';
import { matchExpectation } from '../expect/match-expectation.ts';
import { PhaseChecks } from '../expect/run-checks.ts';
import { HarnessError } from '../model/errors.ts';
import type { LoadedScenario } from '../model/load-scenario.ts';
import type { CheckSpec, Scenario, StepSpec } from '../model/scenario-schema.ts';
import { runProbe } from '../probes/run-probe.ts';
import { expandStep, placeholderResolver } from './expand-step.ts';
import type { PhaseName, PhaseResult, RunEvent, ScenarioResult } from './results.ts';
import { newRunId, runPrefix } from '../../clusters/run-id.ts';

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
}

export async function runScenario({ file, scenario }: LoadedScenario, options: ScenarioRunOptions): Promise<ScenarioResult> {
  const started = performance.now();
  const result: ScenarioResult = { id: scenario.id, title: scenario.title, file, verdict: 'passed', durationMs: 0, phases: [], labs: [], log: [] };
  // absolute: evidence commands may run in another mount namespace (the bpffs holder's), whose cwd is /
  if (options.reportDir) result.evidenceDir = resolve(options.reportDir, scenario.id);
  options.emit({ kind: 'scenario-start', id: scenario.id, title: scenario.title });
  try {
    for (const fix of options.faultOnly ? scenario.fixes.slice(0, 1) : scenario.fixes) {
      await runVariant(scenario, fix, result, options);
    }
    result.verdict = result.phases.every((p) => p.probes.every((r) => r.matched) && p.checks.every((c) => c.matched)) ? 'passed' : 'failed';
  } catch (e) {
    if (e instanceof HarnessError && e.code === 'ABORTED') throw e;
    const err = e as HarnessError;
    if (err.code === 'UNSUPPORTED') {
      result.verdict = 'skipped';
      result.skipReason = err.message;
    } else {
      result.verdict = 'errored';
      result.error = { code: err.code ?? 'INTERNAL', message: err.message, hint: err.hint };
    }
  }
  result.durationMs = Math.round(performance.now() - started);
  options.emit({ kind: 'scenario-end', result });
  return result;
}

async function runVariant(scenario: Scenario, fix: Scenario['fixes'][number], result: ScenarioResult, options: ScenarioRunOptions): Promise<void> {
  const runId = newRunId();
  const log = (line: string) => result.log.push(`[${fix.name}] ${line}`);
  const t0 = performance.now();
  const cluster = await options.provider.provision(scenario.topology, { runId, prefix: runPrefix(runId), signal: options.signal, log });
  const lab = { variant: fix.name, runId, provisionMs: Math.round(performance.now() - t0), teardownMs: 0 };
  result.labs.push(lab);
  options.emit({ kind: 'lab-ready', id: scenario.id, variant: fix.name, ms: lab.provisionMs });
  try {
    const phase = (name: PhaseName, spec: { steps?: StepSpec[]; expect: Scenario['baseline']['expect']; checks: CheckSpec[]; title?: string }) =>
      runPhase({ scenario, cluster, name, variant: fix.name, steps: spec.steps ?? [], expect: spec.expect, checks: spec.checks, title: spec.title, options, result });
    await phase('baseline', scenario.baseline);
    await phase('faulted', scenario.fault);
    if (!options.faultOnly) await phase('fixed', fix);
  } finally {
    const t1 = performance.now();
    if (options.keep) log(`kept: lab ${runId} stays up; remove it with \`netrepro clean --force\``);
    else await cluster.destroy();
    lab.teardownMs = Math.round(performance.now() - t1);
  }
}

interface PhaseInput {
  scenario: Scenario;
  cluster: StartedCluster;
  name: PhaseName;
  variant: string;
  steps: StepSpec[];
  expect: Scenario['baseline']['expect'];
  checks: CheckSpec[];
  title?: string;
  options: ScenarioRunOptions;
  result: ScenarioResult;
}

async function runPhase(p: PhaseInput): Promise<void> {
  const { scenario, cluster, options } = p;
  const started = performance.now();
  const phase: PhaseResult = { name: p.name, variant: p.variant, title: p.title, steps: [], probes: [], checks: [], durationMs: 0 };
  const resolve = placeholderResolver(cluster);
  p.result.phases.push(phase);
  options.emit({ kind: 'phase-start', id: scenario.id, phase: p.name, variant: p.variant, title: p.title });
  const evidenceDir = p.result.evidenceDir && join(p.result.evidenceDir, scenario.fixes.length > 1 ? p.variant : '', p.name);
  await collectPhaseEvidence(cluster, evidenceDir, scenario.evidence, async () => {
    for (const step of p.steps) {
      for (const action of expandStep(step, resolve)) {
        if (options.signal.aborted) throw new HarnessError('ABORTED', 'aborted');
        const started = performance.now();
        if (action.kind === 'command') await cluster.target(action.on).exec(action.argv, { signal: options.signal, timeoutMs: 30_000 });
        else await cluster.perform(action);
        const done =
          action.kind === 'command'
            ? { on: action.on, argv: action.argv, durationMs: Math.round(performance.now() - started) }
            : { on: `node/${action.node}`, argv: describeAction(action), durationMs: Math.round(performance.now() - started) };
        phase.steps.push(done);
        options.emit({ kind: 'step', id: scenario.id, phase: p.name, step: done });
      }
    }
    const checks = new PhaseChecks(p.checks, cluster, resolve);
    await checks.start();
    // probes run one at a time so each one's packet watch sees only its own traffic
    for (const [id, expected] of Object.entries(p.expect)) {
      const spec = scenario.probes.find((x) => x.id === id)!;
      const observation = await runProbe(spec, cluster, options.signal);
      const match = matchExpectation(expected, observation, (ref) => cluster.address(ref));
      const probe = {
        id,
        expected: match.expected,
        observed: observation.outcome,
        matched: match.matched,
        mismatch: match.mismatch,
        summary: observation.summary,
        durationMs: observation.durationMs,
        detail: { ...observation.detail, servedBy: observation.servedBy, source: observation.source },
      };
      phase.probes.push(probe);
      options.emit({ kind: 'probe', id: scenario.id, phase: p.name, probe });
    }
    for (const check of await checks.finish()) {
      phase.checks.push(check);
      options.emit({ kind: 'check', id: scenario.id, phase: p.name, check });
    }
  });
  phase.durationMs = Math.round(performance.now() - started);
}

function describeAction(action: Exclude<ReturnType<typeof expandStep>[number], { kind: 'command' }>): string[] {
  switch (action.kind) {
    case 'start':
      return ['start', action.component, ...(action.version ? [action.version] : [])];
    case 'reboot':
      return ['reboot, then start', ...(action.order ?? ['(topology order)'])];
    case 'sock-lb-stale-program':
      return ['attach stale socket-LB program first:', `${action.service}:${action.port} -> ${action.backend}`];
    case 'sock-lb-detach-stale':
      return ['detach the stale socket-LB program'];
  }
}
