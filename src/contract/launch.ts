// Where a command's process comes from. A command runner (command.ts) is built over one launch: the
// default forks through node:child_process; a netns lab's runner launches through its own native
// spawner (native-spawner.ts), so the harness does not fork its heap for each of the lab's commands.
import { spawn } from 'node:child_process';
import type { EventEmitter } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import { enterArgv, type NamespaceEntry } from './namespace-entry.ts';

export interface LaunchOptions {
  /** An open stdin pipe (else stdin is empty). */
  stdin: boolean;
  /** Added to this process's environment. */
  env?: Record<string, string>;
  /** The namespaces the command runs in. */
  enter?: NamespaceEntry;
}

/** The part of ChildProcess that a command runner uses. */
export interface ChildLike extends EventEmitter {
  readonly pid?: number | undefined;
  readonly stdin: Writable | null;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
  kill(signal?: NodeJS.Signals): boolean;
}

/** Starts `argv` as `options` say. */
export type Launch = (argv: readonly string[], options: LaunchOptions) => ChildLike;

/** node:child_process, a namespace entered through `nsenter` (namespace-entry.ts). */
export const nodeLaunch: Launch = (argv, options) => {
  const [file = '', ...args] = enterArgv(options.enter, argv);
  const env = options.env ? { ...process.env, ...options.env } : undefined;
  return spawn(file, args, { stdio: [options.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'], env });
};
