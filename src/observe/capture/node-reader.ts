// How a node's capture commands run: one by one on a Target (this host, a kept lab's or cluster's node namespace),
// or all at once elsewhere (a `kubectl debug` pod: script-reader.ts). Either way each command ends as an outcome:
// its output, or why it did not run.
import type { Target } from '../../contract/provider.ts';
import { errorFields } from '../../model/errors.ts';
import type { CaptureCommand, WatchedModule } from './capture-commands.ts';
import { MODULES_COMMAND } from './capture-commands.ts';

export interface CommandOutcome {
  argv: readonly string[];
  stdout: string;
  stderr: string;
  exitCode: number | undefined;
  /** Why it did not run at all: the program is missing, or running it would load a module. */
  notRun?: string;
}

export interface NodeReader {
  /** Every command's outcome, by its key. */
  read(commands: readonly CaptureCommand[]): Promise<Map<string, CommandOutcome>>;
}

const PER_COMMAND_TIMEOUT_MS = 60_000;

/** Why a command must not run, given the loaded modules and the iptables version line; undefined when it may. */
export function guardOf(
  command: CaptureCommand,
  loaded: ReadonlySet<string>,
  iptablesVersion: string | undefined,
): string | undefined {
  if (command.skip) return command.skip;
  const module = command.needsModule;
  if (module && !loaded.has(module)) return notLoaded(module, command.argv[0]!);
  if (command.needsIptablesTables && iptablesVersion?.includes('nf_tables') && !loaded.has('nf_tables'))
    return notLoaded('nf_tables', 'iptables-nft-save');
  return undefined;
}

const notLoaded = (module: WatchedModule, program: string) =>
  `${module} is not loaded; ${program} would load it, and capture changes nothing: not run`;

/** Runs each command on `target` in turn; the modules are read first, as they decide what may run. */
export class TargetReader implements NodeReader {
  constructor(private readonly target: Target) {}

  async read(commands: readonly CaptureCommand[]): Promise<Map<string, CommandOutcome>> {
    const out = new Map<string, CommandOutcome>();
    const modules = await this.run(MODULES_COMMAND);
    out.set(MODULES_COMMAND.key, modules);
    const loaded = new Set(modules.stdout.split('\n').filter(Boolean));
    for (const command of commands) {
      if (command.key === MODULES_COMMAND.key) continue;
      const why = guardOf(command, loaded, out.get('iptables-version')?.stdout);
      out.set(command.key, why ? notRunOutcome(command, why) : await this.run(command));
    }
    return out;
  }

  private async run(command: CaptureCommand): Promise<CommandOutcome> {
    try {
      const r = await this.target.exec(command.argv, { reject: false, timeoutMs: PER_COMMAND_TIMEOUT_MS });
      // nsenter's and sh's "not found" is 127
      if (r.exitCode === 127) return notRunOutcome(command, `${command.argv[0]}: command not found`);
      if (r.timedOut) return { ...outcomeOf(command, r), notRun: `timed out after ${PER_COMMAND_TIMEOUT_MS} ms` };
      return outcomeOf(command, r);
    } catch (e) {
      const message = errorFields(e).message;
      const missing = /ENOENT/.test(message) || (e as NodeJS.ErrnoException).code === 'ENOENT';
      return notRunOutcome(command, missing ? `${command.argv[0]}: command not found` : message);
    }
  }
}

function outcomeOf(command: CaptureCommand, r: { stdout: string; stderr: string; exitCode: number | undefined }) {
  return { argv: command.argv, stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode };
}

export function notRunOutcome(command: CaptureCommand, why: string): CommandOutcome {
  return { argv: command.argv, stdout: '', stderr: '', exitCode: undefined, notRun: why };
}
