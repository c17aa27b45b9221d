// Commands in a pod's container through the Exec API (websocket), never through a shell string: one that
// runs to its end, and one that runs until stopped (tcpdump) with its lines as they come.
import type { Exec, V1Status } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { LineLog, type ExecOptions, type ExecResult, type Spawned } from '../../../contract/command.ts';
import { CommandFailedError, HarnessError } from '../../../model/errors.ts';
import type { PodRef } from './kube-api.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function exitCodeOf(status: V1Status): number | undefined {
  if (status.status === 'Success') return 0;
  const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
  return cause?.message !== undefined ? Number(cause.message) : undefined;
}

/** Collects a stream's text and hands out complete lines as they arrive. */
class TextSink extends Writable {
  text = '';
  private partial = '';
  constructor(private readonly onLine?: (line: string) => void) {
    super();
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void) {
    const s = chunk.toString();
    this.text += s;
    if (this.onLine) {
      const parts = (this.partial + s).split('\n');
      this.partial = parts.pop() ?? '';
      for (const line of parts) this.onLine(line);
    }
    done();
  }
}

/** Where a command's output goes, and what it reads. */
interface ExecStreams {
  stdout: TextSink;
  stderr: TextSink;
  /** Written to its stdin; without it, no stdin. */
  input?: string;
}

/** A command started in a container: its exit code as the kubelet reports it, and a way to close its stream. */
interface Running {
  done: Promise<number | undefined>;
  close(): void;
}

export class PodExec {
  constructor(private readonly execApi: Exec) {}

  /** Runs argv to its end; rejects as a command runner does (non-zero exit, timeout, abort). */
  async exec(pod: PodRef, argv: readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
    const started = performance.now();
    const stdout = new TextSink();
    const stderr = new TextSink();
    const where = `pod/${pod.name}`;
    const running = this.start(pod, argv, { stdout, stderr, input: options.input });
    let timedOut = false;
    const timer = options.timeoutMs
      ? setTimeout(() => ((timedOut = true), running.close()), options.timeoutMs)
      : undefined;
    const onAbort = () => running.close();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const exitCode = await running.done;
      if (options.signal?.aborted)
        throw new HarnessError('ABORTED', `aborted while running in ${where}: ${argv.join(' ')}`);
      const result: ExecResult = {
        argv,
        exitCode,
        stdout: stdout.text,
        stderr: stderr.text,
        timedOut,
        durationMs: performance.now() - started,
      };
      if (options.reject !== false && (exitCode !== 0 || timedOut))
        throw new CommandFailedError(argv, exitCode, stdout.text, stderr.text, where);
      return result;
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Starts argv until stopped. Closing an exec stream does not stop the process in the container, so it
   * records its pid and stop() signals it there (SIGINT makes tcpdump flush and exit cleanly).
   */
  spawn(pod: PodRef, argv: readonly string[]): Spawned {
    const pidFile = `/tmp/netrepro-${randomBytes(4).toString('hex')}.pid`;
    const wrapped = ['sh', '-c', `echo $$ > ${pidFile}; exec "$@"`, 'sh', ...argv];
    const started = performance.now();
    let push: (line: string) => void = () => {};
    const running = this.start(pod, wrapped, {
      stdout: new TextSink((l) => push(l)),
      stderr: new TextSink((l) => push(l)),
    });
    const exited = running.done.catch(() => undefined);
    const log = new LineLog(argv, exited, `pod/${pod.name}`);
    push = log.push;
    return {
      argv,
      pid: undefined,
      lines: () => log.lines(),
      onLine: (listener) => log.onLine(listener),
      waitFor: (pattern, timeoutMs) => log.waitFor(pattern, timeoutMs),
      stop: async (signal = 'SIGTERM') => {
        const sig = signal.replace(/^SIG/, '');
        await this.execDetached(pod, ['sh', '-c', `kill -${sig} "$(cat ${pidFile})" 2>/dev/null; rm -f ${pidFile}`]);
        const exitCode = await Promise.race([exited, sleep(5000).then(() => (running.close(), undefined))]);
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

  /** Runs argv and waits for it at most 10 s, its result unread. */
  private async execDetached(pod: PodRef, argv: readonly string[]): Promise<void> {
    const r = this.start(pod, argv, { stdout: new TextSink(), stderr: new TextSink() });
    await Promise.race([r.done.catch(() => undefined), sleep(10_000)]);
    r.close();
  }

  /** Runs argv in a container; resolves with the exit code the kubelet reports. */
  private start(pod: PodRef, argv: readonly string[], { stdout, stderr, input }: ExecStreams): Running {
    let socket: { close(): void } | undefined;
    const done = new Promise<number | undefined>((resolve, reject) => {
      this.execApi
        .exec(
          pod.namespace,
          pod.name,
          pod.container,
          [...argv],
          stdout,
          stderr,
          input === undefined ? null : Readable.from([input]),
          false,
          (status) => resolve(exitCodeOf(status)),
        )
        .then((ws) => {
          socket = ws;
          ws.on('close', () => resolve(undefined));
        }, reject);
    });
    return { done, close: () => socket?.close() };
  }
}
