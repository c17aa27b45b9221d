// A long-running process a real cluster starts itself (the `local` cluster's etcd, control plane, containerd,
// kubelet and kube-proxy; a private Docker engine; the API forwarders): started in the run's namespaces, its
// output in a log file of the run's state directory (not in this process's memory), readiness read from a
// line it prints, stopped by signal.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { HarnessError } from '../../../model/errors.ts';
import { enterArgv, type NamespaceEntry } from '../../../contract/namespace-entry.ts';

export class Daemon {
  private readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  private exitCode: number | null | undefined;
  readonly argv: readonly string[];

  constructor(
    readonly name: string,
    argv: readonly string[],
    readonly logFile: string,
    enter?: NamespaceEntry,
    env?: Record<string, string>,
  ) {
    this.argv = enterArgv(enter, argv);
    const fd = openSync(logFile, 'a');
    try {
      // its own process group: a Ctrl-C in the terminal reaches the harness, whose teardown stops it in order
      this.child = spawn(this.argv[0]!, this.argv.slice(1), {
        stdio: ['ignore', fd, fd],
        detached: true,
        env: env ? { ...process.env, ...env } : process.env,
      });
    } finally {
      closeSync(fd);
    }
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => resolve((this.exitCode = code ?? (signal ? 128 : null))));
      this.child.once('error', () => resolve((this.exitCode = null)));
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  /** The log so far. */
  async log(): Promise<string> {
    const f = await open(this.logFile, 'r');
    try {
      return (await f.readFile()).toString('utf8');
    } finally {
      await f.close();
    }
  }

  /** The last lines of the log, for an error message. */
  async tail(lines = 15): Promise<string> {
    return (await this.log().catch(() => '')).trimEnd().split('\n').slice(-lines).join('\n');
  }

  /** Resolves once the log has a line matching `pattern` (read as it grows); rejects when the process exits first or on timeout. */
  async waitForLine(pattern: RegExp, timeoutMs: number, signal?: AbortSignal): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let offset = 0;
    let partial = '';
    const f = await open(this.logFile, 'r');
    try {
      for (;;) {
        const buf = Buffer.alloc(65536);
        const { bytesRead } = await f.read(buf, 0, buf.length, offset);
        if (bytesRead > 0) {
          offset += bytesRead;
          const lines = (partial + buf.subarray(0, bytesRead).toString('utf8')).split('\n');
          partial = lines.pop() ?? '';
          const hit = lines.find((l) => pattern.test(l));
          if (hit !== undefined) return hit;
          continue;
        }
        if (!this.running)
          throw new HarnessError(
            'LAB_FAILED',
            `${this.name} exited (${this.exitCode}) before printing ${pattern}; its log (${this.logFile}):\n${await this.tail()}`,
          );
        if (signal?.aborted) throw new HarnessError('ABORTED', `aborted while waiting for ${this.name}`);
        if (Date.now() > deadline)
          throw new HarnessError(
            'LAB_FAILED',
            `${this.name} did not print ${pattern} within ${timeoutMs} ms; its log (${this.logFile}):\n${await this.tail()}`,
          );
        await Promise.race([new Promise((r) => setTimeout(r, 100)), this.exited]);
      }
    } finally {
      await f.close();
    }
  }

  /** SIGTERM (or `signal`), SIGKILL after `graceMs`; resolves once it exited. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 5000): Promise<void> {
    if (!this.running || this.child.pid === undefined) return;
    try {
      process.kill(this.child.pid, signal);
    } catch {
      return;
    }
    const timer = setTimeout(() => {
      try {
        process.kill(this.child.pid!, 'SIGKILL');
      } catch {}
    }, graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}
