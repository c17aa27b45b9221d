// Runs an example's command as a reader would in this checkout: `node bin/netrepro.js ARGS` from the
// package root, stdout and stderr into one file in the order they were written (what a terminal shows
// of a non-terminal run: no spinner, no colour), with the reader's environment minus what changes
// the output (CI and GitHub Actions variables, colour switches, NETREPRO_* settings).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/model/package-root.ts';
import type { ExampleCommand } from './example-command.ts';

/** Conditions a marker may name (`<!-- example CONDITION: ... -->`) and the environment each stands for. */
const CONDITIONS: Record<string, (env: NodeJS.ProcessEnv, scratch: string) => void> = {
  // a PATH holding only node and an empty build cache: what a machine without the real-cluster tools (nor a kind
  // build, with which kind would run on a Docker engine of its own) looks like to every provider
  'without docker, kind or kubectl on PATH': (env, scratch) => {
    symlinkSync(process.execPath, join(scratch, 'node'));
    env.PATH = scratch;
    env.NETREPRO_CACHE = scratch;
  },
};

export const isCondition = (text: string): boolean => Object.hasOwn(CONDITIONS, text);

/** Commands that build labs, and the providers whose labs they build on this machine. */
const LAB_COMMANDS = new Set(['run', 'explain', 'gate', 'mutate']);
const LOCAL_PROVIDERS = new Set(['netns', 'local']);

/**
 * `lab`: it builds labs, so the recorded run is what its block is checked against; `live`: it runs in
 * a moment anywhere (no lab, or a real-cluster provider under a condition that keeps it from starting
 * one), so the check runs it again. A real-cluster run without such a condition is refused.
 */
export function exampleKind(command: ExampleCommand, condition: string | undefined): 'lab' | 'live' {
  if (!command.name || !LAB_COMMANDS.has(command.name)) return 'live';
  if (LOCAL_PROVIDERS.has(String(command.options.provider ?? 'netns'))) return 'lab';
  if (condition) return 'live';
  throw new Error(`a ${command.options.provider} example must name a condition that keeps it from starting a cluster`);
}

export interface ExampleRun {
  exitCode: number;
  /** stdout and stderr as written (stdout alone for `2>/dev/null`). */
  output: string;
}

/** Runs the command now; `extraArgs` are appended (the recording's `--json FILE`). */
export async function runExample(
  command: ExampleCommand,
  condition: string | undefined,
  extraArgs: readonly string[] = [],
): Promise<ExampleRun> {
  const scratch = mkdtempSync(join(tmpdir(), 'netrepro-example-'));
  try {
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
    for (const name of Object.keys(env)) if (/^(CI|GITHUB_.*|FORCE_COLOR|NETREPRO_.*)$/.test(name)) delete env[name];
    if (condition) CONDITIONS[condition]!(env, scratch);
    const outputFile = join(scratch, 'output');
    const fd = openSync(outputFile, 'w');
    let ended: [number | null, NodeJS.Signals | null];
    try {
      const child = spawn(process.execPath, ['bin/netrepro.js', ...command.argv, ...extraArgs], {
        cwd: PACKAGE_ROOT,
        env,
        stdio: ['ignore', fd, command.stdoutOnly ? 'ignore' : fd],
      });
      ended = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
    } finally {
      closeSync(fd);
    }
    const [exitCode, signal] = ended;
    if (exitCode === null) throw new Error(`netrepro ${command.argv.join(' ')} ended by ${signal}`);
    return { exitCode, output: readFileSync(outputFile, 'utf8') };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
