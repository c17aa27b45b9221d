// One way to run external programs: argv arrays only (never a shell string built from input),
// deadlines, cancellation, and a CommandFailedError that carries argv and output tails.
//
// Built on node:child_process, not execa: a suite run started ~5000 processes then, and execa cost 4.9 ms
// of this process's CPU per call against 2.4 ms for a plain spawn collecting the same output (200
// sequential `nsenter --net=NS -- true`): ~7 s of CPU per `run --all`. What execa gave us is kept
// here: SIGKILL 5 s after a SIGTERM that was ignored, and children killed when this process exits.
// A runner is built over a launch (launch.ts): `runCommand` and `spawnCommand` are the default runner's,
// a netns lab's targets hold a runner over the lab's own native spawner (native-spawner.ts says why).
import { createInterface } from 'node:readline';
import { CommandFailedError, HarnessError } from '../model/errors.ts';
import { type ChildLike, type Launch, type LaunchOptions, nodeLaunch } from './launch.ts';
import { enterArgv, type NamespaceEntry } from './namespace-entry.ts';

export interface ExecOptions {
  timeoutMs?: number;
  input?: string;
  /** Throw CommandFailedError on a non-zero exit (default true). */
  reject?: boolean;
  signal?: AbortSignal;
  /** Added to this process's environment. */
  env?: Record<string, string>;
  /** Ends the command (SIGTERM) without it being an error: the caller has seen enough (an early verdict). */
  stopWhen?: AbortSignal;
  /** Run it inside these namespaces (results and errors show the equivalent nsenter argv). */
  enter?: NamespaceEntry;
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
  enter?: NamespaceEntry;
  /** An open stdin, written through `write` (else stdin is empty). */
  stdin?: boolean;
}

/** A long-running process: readiness is a line it prints, never a sleep. */
export interface Spawned {
  readonly argv: readonly string[];
  /** Known once it started: at once through node:child_process, a moment later through the spawner. */
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

/** A SIGTERM that is ignored this long is followed by SIGKILL. */
const FORCE_KILL_AFTER_MS = 5000;

/** Children still running: killed (SIGTERM) if this process exits first, as on a third Ctrl-C (the spawner's own end SIGTERMs its children). */
const running = new Set<ChildLike>();
let exitHookInstalled = false;

interface Started {
  child: ChildLike;
  /** What ran, as a pasteable argv (nsenter in front when it ran in a namespace). */
  argv: readonly string[];
  /** Settles once, after the exit and the end of its output; `error` when it could not start. */
  ended: Promise<{ exitCode: number | undefined; error?: Error }>;
}

function start(launch: Launch, inner: readonly string[], options: LaunchOptions): Started {
  const argv = enterArgv(options.enter, inner);
  if (!argv[0] || inner.length === 0) throw new HarnessError('USAGE', 'empty command');
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const c of running) c.kill('SIGTERM');
    });
  }
  const child = launch(inner, options);
  running.add(child);
  const ended = new Promise<{ exitCode: number | undefined; error?: Error }>((resolve) => {
    // 'close' follows 'exit' once stdout and stderr are drained; a child that never started gets 'error' (and maybe 'close')
    child.on(
      'error',
      (error) => child.pid === undefined && (running.delete(child), resolve({ exitCode: undefined, error })),
    );
    child.once('close', (code) => (running.delete(child), resolve({ exitCode: code ?? undefined })));
  });
  // a child that exits without reading its input must not crash us with EPIPE
  child.stdin?.on('error', () => {});
  return { child, argv, ended };
}

/** Callbacks per signal, behind one listener each: many commands share the run's signal (no MaxListeners warning). */
const abortCallbacks = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `f` when `signal` aborts (at once if it has); returns the undo. */
function onAbort(signal: AbortSignal | undefined, f: () => void): () => void {
  if (!signal) return () => {};
  if (signal.aborted) return (f(), () => {});
  let callbacks = abortCallbacks.get(signal);
  if (!callbacks) {
    const all = (callbacks = new Set());
    abortCallbacks.set(signal, all);
    signal.addEventListener(
      'abort',
      () => {
        for (const g of [...all]) g();
      },
      { once: true },
    );
  }
  callbacks.add(f);
  return () => callbacks.delete(f);
}

/** Sends `signal`; a SIGTERM is followed by SIGKILL if the process is still there after FORCE_KILL_AFTER_MS. */
function kill(child: ChildLike, signal: NodeJS.Signals): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill(signal);
  if (signal !== 'SIGTERM') return;
  const force = setTimeout(
    () => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'),
    FORCE_KILL_AFTER_MS,
  );
  force.unref();
  child.once('exit', () => clearTimeout(force));
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
    for (const w of this.waiters) if (w.pattern.test(line)) this.waiters.delete(w), w.resolve(line);
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
        reject(
          new CommandFailedError(
            this.argv,
            undefined,
            this.seen.join('\n'),
            `not ready after ${timeoutMs} ms (waited for ${pattern})`,
            this.where,
          ),
        );
      }, timeoutMs);
      this.waiters.add(waiter);
      void this.exited.then((code) => {
        if (!this.waiters.delete(waiter)) return;
        clearTimeout(timer);
        reject(
          new CommandFailedError(
            this.argv,
            code,
            this.seen.join('\n'),
            `exited before it was ready (waited for ${pattern})`,
            this.where,
          ),
        );
      });
    });
  }
}

/** A long-running process spawned with `stdin: true`: it takes requests on its stdin. */
export interface SpawnedWithInput extends Spawned {
  write(text: string): void;
}

/** Runs commands through one launch: node:child_process by default, a lab's native spawner for its targets. */
export class CommandRunner {
  constructor(private readonly launch: Launch) {}

  /** Runs `command` to its end; `where` (a target's ref) names the place in errors. */
  async exec(command: readonly string[], options: ExecOptions = {}, where?: string): Promise<ExecResult> {
    const started = performance.now();
    const { child, argv, ended } = start(this.launch, command, {
      stdin: options.input !== undefined,
      env: options.env,
      enter: options.enter,
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout!.on('data', (b: Buffer) => stdout.push(b));
    child.stderr!.on('data', (b: Buffer) => stderr.push(b));
    if (options.input !== undefined) child.stdin!.end(options.input);
    let stopped = false;
    let timedOut = false;
    let canceled = false;
    const stop = () => ((stopped = true), kill(child, 'SIGTERM'));
    const cancel = () => ((canceled = true), kill(child, 'SIGTERM'));
    const timer =
      options.timeoutMs !== undefined && options.timeoutMs > 0
        ? setTimeout(() => ((timedOut = true), kill(child, 'SIGTERM')), options.timeoutMs)
        : undefined;
    const undo = [onAbort(options.signal, cancel), onAbort(options.stopWhen, stop)];
    const { exitCode, error } = await ended;
    clearTimeout(timer);
    for (const f of undo) f();
    const out: ExecResult = {
      argv,
      exitCode,
      stdout: Buffer.concat(stdout).toString('utf8'),
      stderr: Buffer.concat(stderr).toString('utf8'),
      timedOut,
      durationMs: performance.now() - started,
      stopped,
    };
    // could not start at all (ENOENT and the like)
    if (error) throw new CommandFailedError(argv, undefined, out.stdout, `${out.stderr}${error.message}`, where);
    if (stopped) return out;
    if (canceled) throw new HarnessError('ABORTED', `aborted while running: ${argv.join(' ')}`);
    if (options.reject !== false && (out.exitCode !== 0 || out.timedOut)) {
      throw new CommandFailedError(
        argv,
        out.exitCode,
        out.stdout,
        out.timedOut ? `${out.stderr}\ntimed out after ${options.timeoutMs} ms` : out.stderr,
        where,
      );
    }
    return out;
  }

  /** Starts a long-running `command`: readiness is a line it prints. */
  spawn(command: readonly string[], options: SpawnOptions & { stdin: true }): SpawnedWithInput;
  spawn(command: readonly string[], options?: SpawnOptions): Spawned;
  spawn(command: readonly string[], options: SpawnOptions = {}): Spawned | SpawnedWithInput {
    const started = performance.now();
    const { child, argv, ended } = start(this.launch, command, { stdin: options.stdin === true, enter: options.enter });
    const exited = ended.then((r) => r.exitCode);
    const log = new LineLog(argv, exited);
    for (const stream of [child.stdout!, child.stderr!]) createInterface({ input: stream }).on('line', log.push);
    void exited.then(onAbort(options.signal, () => kill(child, 'SIGTERM')));
    return {
      argv,
      get pid() {
        return child.pid;
      },
      lines: () => log.lines(),
      onLine: (listener) => log.onLine(listener),
      waitFor: (pattern, timeoutMs) => log.waitFor(pattern, timeoutMs),
      write: (text: string) => void child.stdin?.write(text),
      async stop(signal = 'SIGTERM') {
        kill(child, signal);
        const exitCode = await exited;
        return {
          argv,
          exitCode,
          stdout: log.lines().join('\n'),
          stderr: '',
          timedOut: false,
          durationMs: performance.now() - started,
        };
      },
    };
  }
}

/** node:child_process: every command that is not a lab's own. */
export const defaultRunner = new CommandRunner(nodeLaunch);

export function runCommand(command: readonly string[], options?: ExecOptions, where?: string): Promise<ExecResult> {
  return defaultRunner.exec(command, options, where);
}

export function spawnCommand(command: readonly string[], options: SpawnOptions & { stdin: true }): SpawnedWithInput;
export function spawnCommand(command: readonly string[], options?: SpawnOptions): Spawned;
export function spawnCommand(command: readonly string[], options?: SpawnOptions): Spawned | SpawnedWithInput {
  return defaultRunner.spawn(command, options);
}
