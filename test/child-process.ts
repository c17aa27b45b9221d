// A program as a child process, for tests that run the CLI as users do: exit code, output (final
// newline dropped) and pid. Its environment extends this process's.
import { spawn } from 'node:child_process';

export interface ProcessResult {
  exitCode: number | undefined;
  /** The signal that ended it, when one did. */
  signal: NodeJS.Signals | undefined;
  stdout: string;
  stderr: string;
}

export interface ProcessOptions {
  cwd?: string;
  env?: Record<string, string | undefined>;
  /** Killed (SIGTERM) after this many ms. */
  timeout?: number;
}

export function runProcess(
  file: string,
  args: readonly string[],
  options: ProcessOptions = {},
): Promise<ProcessResult> & { pid: number | undefined } {
  const child = spawn(file, args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    timeout: options.timeout,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (b: Buffer) => out.push(b));
  child.stderr.on('data', (b: Buffer) => err.push(b));
  const text = (chunks: Buffer[]) =>
    Buffer.concat(chunks)
      .toString('utf8')
      .replace(/\r?\n$/, '');
  const done = new Promise<ProcessResult>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) =>
      resolve({ exitCode: code ?? undefined, signal: signal ?? undefined, stdout: text(out), stderr: text(err) }),
    );
  });
  return Object.assign(done, { pid: child.pid });
}
