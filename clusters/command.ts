// One way to run external programs: argv arrays only (never a shell string built from input),
// deadlines, cancellation, and a CommandFailedError that carries argv and output tails.
import { execa, type ResultPromise } from 'execa';
import { createInterface } from 'node:readline';
import { CommandFailedError, HarnessError } from '../harness/model/errors.ts';

export interface ExecOptions {
  timeoutMs?: number;
  input?: string;
  /** Throw CommandFailedError on a non-zero exit (default true). */
  reject?: boolean;
  signal?: AbortSignal;
  env?: Record<string, string>;
}

export interface ExecResult {
  argv: readonly string[];
  exitCode: number | undefined;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  durationMs: number;
}

export interface SpawnOptions {
  signal?: AbortSignal;
}

/** A long-running process: readiness is a line it prints, never a sleep. */
export interface Spawned {
  readonly argv: readonly string[];
  readonly pid: number | undefined;
  /** Resolves with the first stdout/stderr line matching `pattern`; rejects if the process exits first. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<string>;
  /** All lines printed so far. */
  lines(): string[];
  /** Send `signal` and wait for the exit. */
  stop(signal?: NodeJS.Signals): Promise<ExecResult>;
}

export async function runCommand(argv: readonly string[], options: ExecOptions = {}, where?: string): Promise<ExecResult> {
  const [file, ...args] = argv;
  if (!file) throw new HarnessError('USAGE', 'empty command');
  const started = performance.now();
  const result = await execa(file, args, {
    input: options.input,
    timeout: options.timeoutMs,
    cancelSignal: options.signal,
    reject: false,
    env: options.env,
    stripFinalNewline: false,
  });
  const out: ExecResult = {
    argv,
    exitCode: result.exitCode,
    stdout: String(result.stdout ?? ''),
    stderr: String(result.stderr ?? ''),
    timedOut: result.timedOut,
    durationMs: performance.now() - started,
  };
  if (result.failed && result.exitCode === undefined && !result.timedOut && !result.isCanceled) {
    // could not start at all (ENOENT and the like)
    throw new CommandFailedError(argv, undefined, out.stdout, `${out.stderr}${result.originalMessage ?? result.message}`, where);
  }
  if (result.isCanceled) throw new HarnessError('ABORTED', `aborted while running: ${argv.join(' ')}`);
  if (options.reject !== false && (out.exitCode !== 0 || out.timedOut)) {
    throw new CommandFailedError(argv, out.exitCode, out.stdout, out.timedOut ? `${out.stderr}\ntimed out after ${options.timeoutMs} ms` : out.stderr, where);
  }
  return out;
}

export function spawnCommand(argv: readonly string[], options: SpawnOptions = {}): Spawned {
  const [file, ...args] = argv;
  if (!file) throw new HarnessError('USAGE', 'empty command');
  const started = performance.now();
  const child: ResultPromise = execa(file, args, { reject: false, cancelSignal: options.signal, buffer: false, stdin: 'ignore' });
  const seen: string[] = [];
  const waiters = new Set<{ pattern: RegExp; resolve: (l: string) => void }>();
  const onLine = (line: string) => {
    seen.push(line);
    for (const w of waiters) if (w.pattern.test(line)) (waiters.delete(w), w.resolve(line));
  };
  for (const stream of [child.stdout, child.stderr]) if (stream) createInterface({ input: stream }).on('line', onLine);
  const exited = child.then((r) => r);
  return {
    argv,
    pid: child.pid,
    lines: () => [...seen],
    waitFor(pattern, timeoutMs) {
      const already = seen.find((l) => pattern.test(l));
      if (already) return Promise.resolve(already);
      return new Promise((resolve, reject) => {
        const waiter = { pattern, resolve: (l: string) => (clearTimeout(timer), resolve(l)) };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new CommandFailedError(argv, undefined, seen.join('\n'), `not ready after ${timeoutMs} ms (waited for ${pattern})`));
        }, timeoutMs);
        waiters.add(waiter);
        void exited.then((r) => {
          if (!waiters.has(waiter)) return;
          waiters.delete(waiter);
          clearTimeout(timer);
          reject(new CommandFailedError(argv, r.exitCode, seen.join('\n'), `exited before it was ready (waited for ${pattern})`));
        });
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const r = await exited;
      return { argv, exitCode: r.exitCode, stdout: seen.join('\n'), stderr: '', timedOut: false, durationMs: performance.now() - started };
    },
  };
}
