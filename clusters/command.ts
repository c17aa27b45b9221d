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
  /** Ends the command (SIGTERM) without it being an error: the caller has seen enough (an early verdict). */
  stopWhen?: AbortSignal;
}

export interface ExecResult {
  argv: readonly string[];
  exitCode: number | undefined;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  durationMs: number;
  /** Ended through `stopWhen`. */
  stopped?: boolean;
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
  /** Called for every line from now on. */
  onLine(listener: (line: string) => void): void;
  /** Send `signal` and wait for the exit. */
  stop(signal?: NodeJS.Signals): Promise<ExecResult>;
}

export async function runCommand(argv: readonly string[], options: ExecOptions = {}, where?: string): Promise<ExecResult> {
  const [file, ...args] = argv;
  if (!file) throw new HarnessError('USAGE', 'empty command');
  const started = performance.now();
  const child = execa(file, args, {
    input: options.input,
    timeout: options.timeoutMs,
    cancelSignal: options.signal,
    reject: false,
    env: options.env,
    stripFinalNewline: false,
  });
  let stopped = false;
  const stop = () => {
    stopped = true;
    child.kill('SIGTERM');
  };
  if (options.stopWhen?.aborted) stop();
  options.stopWhen?.addEventListener('abort', stop, { once: true });
  const result = await child;
  options.stopWhen?.removeEventListener('abort', stop);
  const out: ExecResult = {
    argv,
    exitCode: result.exitCode,
    stdout: String(result.stdout ?? ''),
    stderr: String(result.stderr ?? ''),
    timedOut: result.timedOut,
    durationMs: performance.now() - started,
    stopped,
  };
  if (stopped) return out;
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

/** The lines a running process printed, with readiness waits on them (never a sleep). */
export class LineLog {
  private readonly seen: string[] = [];
  private readonly listeners: ((line: string) => void)[] = [];
  private readonly waiters = new Set<{ pattern: RegExp; resolve: (l: string) => void }>();

  constructor(
    private readonly argv: readonly string[],
    /** Resolves with the exit code when the process ends. */
    private readonly exited: Promise<number | undefined>,
    private readonly where?: string,
  ) {}

  push = (line: string): void => {
    this.seen.push(line);
    for (const listener of this.listeners) listener(line);
    for (const w of this.waiters) if (w.pattern.test(line)) (this.waiters.delete(w), w.resolve(line));
  };

  lines(): string[] {
    return [...this.seen];
  }

  onLine(listener: (line: string) => void): void {
    this.listeners.push(listener);
  }

  waitFor(pattern: RegExp, timeoutMs: number): Promise<string> {
    const already = this.seen.find((l) => pattern.test(l));
    if (already) return Promise.resolve(already);
    return new Promise((resolve, reject) => {
      const waiter = { pattern, resolve: (l: string) => (clearTimeout(timer), resolve(l)) };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new CommandFailedError(this.argv, undefined, this.seen.join('\n'), `not ready after ${timeoutMs} ms (waited for ${pattern})`, this.where));
      }, timeoutMs);
      this.waiters.add(waiter);
      void this.exited.then((code) => {
        if (!this.waiters.delete(waiter)) return;
        clearTimeout(timer);
        reject(new CommandFailedError(this.argv, code, this.seen.join('\n'), `exited before it was ready (waited for ${pattern})`, this.where));
      });
    });
  }
}

export function spawnCommand(argv: readonly string[], options: SpawnOptions = {}): Spawned {
  const [file, ...args] = argv;
  if (!file) throw new HarnessError('USAGE', 'empty command');
  const started = performance.now();
  const child: ResultPromise = execa(file, args, { reject: false, cancelSignal: options.signal, buffer: false, stdin: 'ignore' });
  const exited = child.then((r) => r);
  const log = new LineLog(argv, exited.then((r) => r.exitCode));
  for (const stream of [child.stdout, child.stderr]) if (stream) createInterface({ input: stream }).on('line', log.push);
  return {
    argv,
    pid: child.pid,
    lines: () => log.lines(),
    onLine: (listener) => log.onLine(listener),
    waitFor: (pattern, timeoutMs) => log.waitFor(pattern, timeoutMs),
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const r = await exited;
      return { argv, exitCode: r.exitCode, stdout: log.lines().join('\n'), stderr: '', timedOut: false, durationMs: performance.now() - started };
    },
  };
}
