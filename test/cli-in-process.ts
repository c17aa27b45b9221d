// The CLI's own entry point (src/cli/build-cli.ts main, what bin/netrepro.js calls) in this process,
// its output captured: what a test of the command line proves without starting a Node process (a
// start costs more than most commands). A test of what only a process shows (exit by a signal, the
// real streams, the environment) starts `node bin/netrepro.js` instead.
import { stripVTControlCharacters } from 'node:util';
import { main } from '../src/cli/build-cli.ts';

/**
 * Exit code, output without colour codes and its final newline (as test/child-process.ts gives a
 * process's), and `pid`: the process the command ran in (this one).
 */
export async function cliInProcess(
  args: string[],
): Promise<{ exitCode: number; stdout: string; stderr: string; pid: number }> {
  let stdout = '';
  let stderr = '';
  const writes = { out: process.stdout.write, err: process.stderr.write };
  const capture = (append: (s: string) => void) =>
    ((chunk: string | Uint8Array) => (append(String(chunk)), true)) as typeof process.stdout.write;
  process.stdout.write = capture((s) => (stdout += s));
  process.stderr.write = capture((s) => (stderr += s));
  try {
    const exitCode = await main(['node', 'netrepro', ...args]);
    return {
      exitCode,
      stdout: stripVTControlCharacters(stdout).replace(/\r?\n$/, ''),
      stderr: stripVTControlCharacters(stderr).replace(/\r?\n$/, ''),
      pid: process.pid,
    };
  } finally {
    process.stdout.write = writes.out;
    process.stderr.write = writes.err;
    process.exitCode = undefined;
  }
}
