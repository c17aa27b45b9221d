// A node's capture commands as one POSIX sh script, for where each command costs a whole launch (a `kubectl debug`
// pod per node): the same guards as TargetReader (a missing program, a module the command would load), each
// command's stdout and stderr base64-encoded between marker lines, so nothing a command prints can be mistaken
// for a marker and binary bytes survive. The script writes no file: stderr is kept in a shell variable.
import { type CaptureCommand, LOADED_FUNCTION, MODULES_COMMAND } from './capture-commands.ts';
import { type CommandOutcome, type NodeReader, notRunOutcome } from './node-reader.ts';

/** A single-quoted shell word. */
export const shellQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

const PRELUDE = [
  'exec 4>&1',
  // stdout goes base64-encoded to fd 4; stderr and the exit status (last line) are captured into $e
  `nr() { k=$1; shift; printf '\\n@@NR-BEGIN %s\\n' "$k"; e=$( { { "$@"; echo "@@NR-RC $?" >&2; } | base64 -w0 >&4; } 2>&1 ); printf '\\n@@NR-ERR %s\\n@@NR-END %s\\n' "$(printf '%s' "$e" | base64 -w0)" "$k"; }`,
  `skip() { printf '\\n@@NR-SKIP %s %s\\n' "$1" "$(printf '%s' "$2" | base64 -w0)"; }`,
  LOADED_FUNCTION,
  'missing() { ! command -v "$1" >/dev/null 2>&1; }',
];

/** The script that runs `commands` (the modules first, as TargetReader reads them). */
export function nodeScript(commands: readonly CaptureCommand[]): string {
  const ordered = [MODULES_COMMAND, ...commands.filter((c) => c.key !== MODULES_COMMAND.key)];
  return [...PRELUDE, ...ordered.map(commandLine)].join('\n');
}

function commandLine(c: CaptureCommand): string {
  if (c.skip) return `skip ${c.key} ${shellQuote(c.skip)}`;
  const program = c.argv[0]!;
  const guards: string[] = [
    `if missing ${shellQuote(program)}; then skip ${c.key} ${shellQuote(`${program}: command not found`)}`,
  ];
  if (c.needsModule)
    guards.push(
      `elif ! loaded ${c.needsModule}; then skip ${c.key} ${shellQuote(`${c.needsModule} is not loaded; ${program} would load it, and capture changes nothing: not run`)}`,
    );
  if (c.needsIptablesTables)
    guards.push(
      `elif iptables --version 2>/dev/null | grep -q nf_tables && ! loaded nf_tables; then skip ${c.key} ${shellQuote('nf_tables is not loaded; iptables-nft-save would load it, and capture changes nothing: not run')}`,
    );
  return `${guards.join('; ')}; else nr ${c.key} ${c.argv.map(shellQuote).join(' ')}; fi`;
}

const B64 = '[A-Za-z0-9+/=]*';

/** Each command's outcome from the script's output; a command with no record ran into the script's end. */
export function parseScriptOutput(
  commands: readonly CaptureCommand[],
  output: string,
  scriptFailure: string,
): Map<string, CommandOutcome> {
  const decode = (b: string) => Buffer.from(b, 'base64').toString('utf8');
  const byKey = new Map([MODULES_COMMAND, ...commands].map((c) => [c.key, c] as const));
  const out = new Map<string, CommandOutcome>();
  for (const m of output.matchAll(new RegExp(`@@NR-BEGIN (\\S+)\\n(${B64})\\n@@NR-ERR (${B64})\\n@@NR-END \\1`, 'g'))) {
    const command = byKey.get(m[1]!);
    if (!command) continue;
    const err = decode(m[3]!);
    const rc = /@@NR-RC (\d+)\s*$/.exec(err);
    out.set(command.key, {
      argv: command.argv,
      stdout: decode(m[2]!),
      stderr: rc ? err.slice(0, rc.index) : err,
      exitCode: rc ? Number(rc[1]) : undefined,
    });
  }
  for (const m of output.matchAll(new RegExp(`@@NR-SKIP (\\S+) (${B64})`, 'g'))) {
    const command = byKey.get(m[1]!);
    if (command) out.set(command.key, notRunOutcome(command, decode(m[2]!)));
  }
  for (const command of byKey.values())
    if (!out.has(command.key)) out.set(command.key, notRunOutcome(command, scriptFailure));
  return out;
}

/** Runs the whole script once, through `run` (its stdout, and a line saying why it failed when it did). */
export class ScriptReader implements NodeReader {
  constructor(private readonly run: (script: string) => Promise<{ stdout: string; failure?: string }>) {}

  async read(commands: readonly CaptureCommand[]): Promise<Map<string, CommandOutcome>> {
    const { stdout, failure } = await this.run(nodeScript(commands));
    return parseScriptOutput(commands, stdout, failure ?? 'no record in the script output: it ended early');
  }
}
