// An example's command line, read the way the CLI reads it: shell words, then the CLI's own commander
// program (src/cli/build-cli.ts) with every action replaced by one that only records what it was
// given, so an option or command that does not exist fails here exactly as it would for a reader.
import { CommanderError } from 'commander';
import { buildCli } from '../../src/cli/build-cli.ts';

export interface ExampleCommand {
  /** The arguments after `netrepro` (or `node bin/netrepro.js`). */
  argv: string[];
  /** `2>/dev/null` at the end: the block shows stdout alone. */
  stdoutOnly: boolean;
  /** The sub-command (`run`, `gate`, ...); undefined for `--help` or `--version`. */
  name?: string;
  /** Its operands (scenario ids, files, patterns). */
  operands: string[];
  /** Its options as commander parsed them (defaults included). */
  options: Record<string, unknown>;
}

const PREFIXES = ['node bin/netrepro.js ', 'netrepro '];
const STDOUT_ONLY = ' 2>/dev/null';

/** Shell words: spaces separate, single or double quotes keep a word together (no escapes, no expansion). */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  const word = /'([^']*)'|"([^"]*)"|(\S+)/g;
  for (const m of line.matchAll(word)) words.push(m[1] ?? m[2] ?? m[3]!);
  return words;
}

/** The command, parsed; an error says what is wrong with it (not netrepro, not a command or option it has). */
export async function parseExampleCommand(command: string): Promise<ExampleCommand> {
  const prefix = PREFIXES.find((p) => command.startsWith(p));
  if (!prefix)
    throw new Error(`not a netrepro command (it must start with ${PREFIXES.map((p) => `"${p}"`).join(' or ')})`);
  const stdoutOnly = command.endsWith(STDOUT_ONLY);
  const argv = shellWords(command.slice(prefix.length, stdoutOnly ? -STDOUT_ONLY.length : undefined));
  const program = buildCli();
  const silent = { writeOut: () => {}, writeErr: () => {} };
  let parsed: { name: string; operands: string[]; options: Record<string, unknown> } | undefined;
  program.configureOutput(silent);
  for (const sub of program.commands)
    sub
      .configureOutput(silent)
      .exitOverride()
      .action(() => {
        parsed = { name: sub.name(), operands: sub.args, options: sub.opts() };
      });
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    if (!(e instanceof CommanderError)) throw e;
    if (e.exitCode !== 0) throw new Error(`netrepro refuses it: ${e.message}`);
  }
  return { argv, stdoutOnly, name: parsed?.name, operands: parsed?.operands ?? [], options: parsed?.options ?? {} };
}
