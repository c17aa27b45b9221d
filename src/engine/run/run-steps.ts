// Runs a phase's steps and proves each one fired: a command must end with its expected exit status
// and print its evidence line; a sysctl must read back as written; a lab action must not throw. A step
// that fails that makes the phase `errored` (never a pass built on a trigger that did not happen).
import type { StartedCluster } from '../../contract/provider.ts';
import type { ExecResult } from '../../contract/command.ts';
import { HarnessError, pasteable } from '../../model/errors.ts';
import type { Command, Expanded, LabAction } from '../../model/lab-action.ts';
import type { StepResult } from './results.ts';

const tail = (text: string, lines = 8) => text.trim().split('\n').slice(-lines).join('\n');

/** A step that did not do what it is for: the phase errors with the command, where it ran and its output. */
export class StepFailedError extends HarnessError {
  constructor(
    readonly step: StepResult,
    why: string,
  ) {
    super(
      'STEP_FAILED',
      `step failed on ${step.on}: ${pasteable(step.argv)}\n  ${why}${step.output ? `\n  output:\n${tail(step.output).replace(/^/gm, '    ')}` : ''}`,
      'the fault or fix did not take effect, so no verdict can be drawn from this phase: run the command in the lab by hand (`netrepro run ID --keep`)',
    );
    this.name = 'StepFailedError';
  }
}

/** Checks a finished command against what the step expects; returns its result or throws StepFailedError. */
function judge(command: Command, r: ExecResult, startedMs: number): StepResult {
  const output = [r.stdout, r.stderr]
    .map((s) => s.trim())
    .filter(Boolean)
    .join('\n');
  const result: StepResult = {
    on: command.on,
    argv: command.argv,
    durationMs: Math.round(performance.now() - startedMs),
    exit: r.timedOut ? 'killed at its timeout' : (r.exitCode ?? 'signal'),
    output: output.slice(-4000) || undefined,
    ...(command.background ? { background: true } : {}),
  };
  if (r.timedOut) throw new StepFailedError(result, `still running after ${command.timeoutMs} ms: killed`);
  if (command.expect.exit !== 'any' && r.exitCode !== command.expect.exit) {
    throw new StepFailedError(result, `exit ${r.exitCode ?? 'signal'}, expected ${command.expect.exit}`);
  }
  if (command.expect.prints) {
    const re = new RegExp(command.expect.prints);
    const line = output.split('\n').find((l) => re.test(l));
    if (!line)
      throw new StepFailedError(
        result,
        `no line of its output matched /${command.expect.prints}/ (the evidence that it fired)`,
      );
    result.evidence = line.trim();
  }
  if (command.expect.silent && output)
    throw new StepFailedError(result, 'it printed what should be gone (the evidence that it took effect is silence)');
  return result;
}

async function readBack(
  cluster: StartedCluster,
  command: Command,
  result: StepResult,
  signal: AbortSignal,
): Promise<void> {
  if (!command.readBack) return;
  const r = await cluster.target(command.on).exec(command.readBack.argv, { reject: false, signal, timeoutMs: 10_000 });
  const value = r.stdout.trim();
  if (r.exitCode !== 0 || value !== command.readBack.value) {
    throw new StepFailedError(
      result,
      `read back \`${pasteable(command.readBack.argv)}\`: ${r.exitCode === 0 ? `"${value}"` : `exit ${r.exitCode}`}, expected "${command.readBack.value}"`,
    );
  }
  result.evidence = `${pasteable(command.readBack.argv)} = ${value}`;
}

/** Runs one foreground step (a command or a lab action) to completion and judges it. */
export async function runForegroundStep(
  cluster: StartedCluster,
  action: Expanded,
  describe: (a: LabAction) => string[],
  signal: AbortSignal,
): Promise<StepResult> {
  if (signal.aborted) throw new HarnessError('ABORTED', 'aborted');
  const started = performance.now();
  if (action.kind !== 'command') {
    // a lab action proves itself: the provider throws when it could not do it
    await cluster.perform(action);
    return {
      on: 'node' in action ? `node/${action.node}` : 'every node',
      argv: describe(action),
      durationMs: Math.round(performance.now() - started),
      exit: 0,
    };
  }
  const r = await cluster.target(action.on).exec(action.argv, { reject: false, signal, timeoutMs: action.timeoutMs });
  await unlessInterrupted(r, signal);
  const result = judge(action, r, started);
  await readBack(cluster, action, result, signal);
  return result;
}

/** A background step: started before the probes, awaited and judged after them. */
export interface BackgroundRun {
  readonly command: Command;
  /** Waits for the command to end (it is killed at its timeout) and judges it. */
  finish(): Promise<StepResult>;
}

export function startBackgroundStep(cluster: StartedCluster, command: Command, signal: AbortSignal): BackgroundRun {
  const started = performance.now();
  const running = cluster
    .target(command.on)
    .exec(command.argv, { reject: false, signal, timeoutMs: command.timeoutMs });
  // an abort (Ctrl-C) rejects it while the probes still run, before finish() awaits it: that rejection is
  // finish()'s to report, never an unhandled one that ends the process before the teardown
  running.catch(() => {});
  return {
    command,
    finish: async () => {
      const r = await running;
      await unlessInterrupted(r, signal);
      return judge(command, r, started);
    },
  };
}

/**
 * A command killed by a signal while the run is being interrupted did not fail: Ctrl-C reaches the whole process
 * group, the command often first, and the run's abort kills what still runs. The abort is looked at once the
 * process's own SIGINT handler has had its turn.
 */
async function unlessInterrupted(r: ExecResult, signal: AbortSignal): Promise<void> {
  if (r.exitCode === undefined && !r.timedOut && !signal.aborted) await new Promise((done) => setTimeout(done, 50));
  if (signal.aborted) throw new HarnessError('ABORTED', 'aborted');
}
