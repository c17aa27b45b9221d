// A cluster whose commands answer from a script, for PhaseChecks: each exec names where it ran and
// what, and gets the next answer its script gives; background commands are fake processes.
import type { ExecResult, Spawned } from '../../../src/contract/command.ts';
import type { StartedCluster, Target } from '../../../src/contract/provider.ts';

export interface FakeProcess {
  /** What it printed. */
  lines: string[];
  /** Its exit status once stopped (undefined: killed by a signal). */
  exitCode: number | undefined;
  stoppedWith?: string;
  /** stop() rejects with this (the process could not be stopped). */
  stopFails?: Error;
}

export interface Script {
  /** `on` and the argv joined by spaces; `nth` counts earlier execs of the same. */
  exec(on: string, cmd: string, nth: number): Partial<ExecResult>;
  spawn?(on: string, cmd: string): FakeProcess;
}

export function fakeCluster(script: Script): { cluster: StartedCluster; calls: string[]; execOptions: unknown[] } {
  const calls: string[] = [];
  const execOptions: unknown[] = [];
  const seen = new Map<string, number>();
  const target = (ref: string): Target => ({
    ref,
    async exec(argv, options) {
      const key = `${ref} ${argv.join(' ')}`;
      calls.push(`exec ${key}`);
      execOptions.push(options);
      const nth = seen.get(key) ?? 0;
      seen.set(key, nth + 1);
      return {
        argv,
        exitCode: 0,
        stdout: '',
        stderr: '',
        timedOut: false,
        durationMs: 1,
        ...script.exec(ref, argv.join(' '), nth),
      };
    },
    spawn(argv) {
      calls.push(`spawn ${ref} ${argv.join(' ')}`);
      const p = script.spawn!(ref, argv.join(' '));
      const spawned: Spawned = {
        argv,
        pid: 1,
        async waitFor(pattern) {
          calls.push(`wait ${ref} ${argv.join(' ')} for ${pattern}`);
          const line = p.lines.find((l) => pattern.test(l));
          if (line === undefined) throw new Error(`${argv.join(' ')} never printed ${pattern}`);
          return line;
        },
        lines: () => p.lines,
        onLine: () => {},
        async stop(signal) {
          calls.push(`stop ${ref} ${argv.join(' ')} ${signal}`);
          p.stoppedWith = signal;
          if (p.stopFails) throw p.stopFails;
          return { argv, exitCode: p.exitCode, stdout: '', stderr: '', timedOut: false, durationMs: 1 };
        },
      };
      return spawned;
    },
  });
  const cluster = {
    target,
    node: (n: string) => target(`node/${n}`),
    pod: (n: string) => target(`pod/${n}`),
  } as unknown as StartedCluster;
  return { cluster, calls, execOptions };
}
