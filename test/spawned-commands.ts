// Which programs the code, the tests and the scenarios start, found by reading the sources: the
// first word of every argv literal handed to a process runner (runCommand, spawnCommand, runProcess,
// execFileSync, spawnSync, Target.exec/spawn, ...), of the constants and fields such a call names,
// of local wrappers around those runners, of `sh -c` scripts, and of every `cmd:` in scenarios/*.yaml.
// test/unit/lab-requirements.test.ts checks each against src/providers/netns/lab-requirements.json.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { isPair, isScalar, isSeq, LineCounter, parseDocument, visit } from 'yaml';
import { tokenize, type Token } from './js-tokens.ts';

export interface Spawn {
  command: string;
  /** file:line */
  where: string;
}

export interface SpawnScan {
  spawns: Spawn[];
  /** Runner calls whose program could not be read from the source (file:line and the call). */
  unresolved: string[];
}

/** Functions and methods that start a process with the program named by their first argument. */
const RUNNERS = new Set([
  'runCommand',
  'spawnCommand',
  'runProcess',
  'execFile',
  'execFileSync',
  'spawn',
  'spawnSync',
  'exec',
  'execSync',
]);

/**
 * Files whose runner calls pass their caller's argv through, putting a fixed prefix in front: the
 * prefixes (every argv literal in the file) are the programs they start; the rest comes from callers.
 */
export const PASS_THROUGH: Record<string, string> = {
  'src/contract/command.ts': 'the one process runner: argv comes from its callers',
  'src/contract/namespace-entry.ts': "puts nsenter (and sh, to join a cgroup) in front of its caller's argv",
  'src/providers/real/containers/cli-node-target.ts':
    "puts docker exec / docker run / minikube ssh in front of its caller's argv",
  'src/providers/real/containers/docker-hosts.ts':
    "runs the cluster engine's docker CLI (the host's, or a private engine's with -H): docker run, exec, inspect, logs, rm",
  'src/providers/real/containers/private-docker.ts': "runs its engine's own docker CLI: docker load, ps, rm",
  'src/providers/real/containers/kind/kind-create.ts':
    "runs kind (the host's or the kind build's) where its engine publishes ports: kind create, kind delete",
};

const SOURCE = /\.(ts|mts|cts|js|mjs|cjs)$/;
const COMMAND_WORD = /^[A-Za-z0-9][A-Za-z0-9._+-]*$/;
/** Programs that run the rest of their argv as another program. */
const PREFIX_PROGRAMS = new Set(['unshare', 'nsenter', 'sudo', 'env', 'timeout', 'setsid', 'nice', 'chroot']);
const SHELLS = new Set(['sh', 'bash', 'dash']);
const SHELL_BUILTINS = new Set([
  'echo',
  'printf',
  'cd',
  'test',
  '[',
  'export',
  'set',
  'read',
  'exit',
  ':',
  'true',
  'false',
  'wait',
  'trap',
  'shift',
  'eval',
  // shell syntax, not programs
  'for',
  'do',
  'done',
  'if',
  'then',
  'elif',
  'else',
  'fi',
]);

/** Tracked and untracked (not ignored) files; a walk when this is not a git checkout. */
export function sourceFiles(root: string): string[] {
  try {
    const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return [...new Set(out.split('\n').filter(Boolean))].sort();
  } catch {
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        if (['node_modules', '.git', 'dist', 'reports'].includes(e.name)) continue;
        if (e.isDirectory()) walk(join(dir, e.name));
        else files.push(relative(root, join(dir, e.name)));
      }
    };
    walk(root);
    return files.sort();
  }
}

/** The programs a shell script starts: the first word of each simple command, builtins left out. */
export function shellScriptCommands(script: string): string[] {
  const out: string[] = [];
  for (const segment of script.split(/&&|\|\||[;|\n]/)) {
    const words = segment.trim().split(/\s+/).filter(Boolean);
    while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!)) words.shift();
    if (words[0] === 'exec' || words[0] === 'command') words.shift();
    const word = words[0];
    if (word && !SHELL_BUILTINS.has(word) && COMMAND_WORD.test(word)) out.push(word);
  }
  return out;
}

interface FileTokens {
  file: string;
  tokens: Token[];
}

const OPEN: Record<string, string> = { '(': ')', '[': ']', '{': '}' };

function matching(tokens: Token[], open: number): number {
  let depth = 0;
  for (let k = open; k < tokens.length; k++) {
    const t = tokens[k]!;
    if (t.kind !== 'punct') continue;
    if (t.text in OPEN) depth++;
    else if (t.text === ')' || t.text === ']' || t.text === '}') {
      depth--;
      if (depth === 0) return k;
    }
  }
  return tokens.length - 1;
}

/** The top-level comma-separated pieces between the bracket at `open` and its match. */
function pieces(tokens: Token[], open: number): Token[][] {
  const close = matching(tokens, open);
  const out: Token[][] = [];
  let current: Token[] = [];
  for (let k = open + 1; k < close; k++) {
    const t = tokens[k]!;
    if (t.kind === 'punct' && t.text in OPEN) {
      const end = matching(tokens, k);
      current.push(...tokens.slice(k, end + 1));
      k = end;
    } else if (t.kind === 'punct' && t.text === ',') {
      out.push(current);
      current = [];
    } else current.push(t);
  }
  if (current.length > 0) out.push(current);
  return out;
}

export function scanSpawns(root: string): SpawnScan {
  const files: FileTokens[] = sourceFiles(root)
    .filter((f) => SOURCE.test(f) && !f.endsWith('.d.ts'))
    .map((file) => ({ file, tokens: tokenize(readFileSync(join(root, file), 'utf8')) }));
  const spawns: Spawn[] = [];
  const unresolved: string[] = [];

  /** Array literals and aliases that define `name`: `name = [...]`, `name: [...]`, `name = OTHER`. */
  const definitions = (name: string, where: FileTokens[]): { ft: FileTokens; slice: Token[] }[] => {
    const found: { ft: FileTokens; slice: Token[] }[] = [];
    for (const ft of where) {
      const t = ft.tokens;
      for (let k = 0; k + 2 < t.length; k++) {
        if (t[k]!.kind !== 'name' || t[k]!.text !== name) continue;
        const op = t[k + 1]!;
        if (op.kind !== 'punct' || (op.text !== '=' && op.text !== ':')) continue;
        const value = t[k + 2]!;
        if (value.kind === 'punct' && value.text === '[')
          found.push({ ft, slice: t.slice(k + 2, matching(t, k + 2) + 1) });
        else if (value.kind === 'name' && op.text === '=' && /^[A-Z_][A-Z0-9_]*$/.test(value.text))
          found.push({ ft, slice: [value] });
      }
    }
    return found;
  };

  /** The programs `slice` (an argv expression) starts; undefined when it cannot be told from the source. */
  const programs = (ft: FileTokens, slice: Token[], seen: Set<string>): Spawn[] | undefined => {
    const first = slice[0];
    if (!first) return undefined;
    const at = (t: Token) => `${ft.file}:${t.line}`;
    if (first.kind === 'string' || (first.kind === 'template' && !first.dynamic)) {
      return COMMAND_WORD.test(first.text) ? [{ command: first.text, where: at(first) }] : [];
    }
    if (first.kind === 'punct' && first.text === '[') {
      const elements = pieces(slice, 0);
      const out: Spawn[] = [];
      // `sh -c SCRIPT` anywhere in the argv (after nsenter, unshare, docker exec ...)
      elements.forEach((e, k) => {
        const next = elements[k + 1]?.[0];
        const script = elements[k + 2]?.[0];
        if (
          e.length === 1 &&
          e[0]!.kind === 'string' &&
          SHELLS.has(e[0]!.text) &&
          next?.kind === 'string' &&
          next.text === '-c' &&
          script &&
          (script.kind === 'string' || script.kind === 'template')
        ) {
          out.push(
            { command: e[0]!.text, where: at(e[0]!) },
            ...shellScriptCommands(script.text).map((command) => ({ command, where: at(script) })),
          );
        }
      });
      const head = elements[0];
      if (!head || head.length === 0) return out;
      if (head[0]!.kind === 'punct' && head[0]!.text === '...') {
        const inner = programs(ft, head.slice(1), seen);
        return inner === undefined ? undefined : [...inner, ...out];
      }
      const inner = programs(ft, head, seen);
      return inner === undefined ? undefined : [...inner, ...out];
    }
    // a name, a member chain (cluster.agentCommand) or a call (this.argv(argv)): look the names up
    const names = slice.filter(
      (t) => t.kind === 'name' && !['this', 'as', 'const', 'readonly', 'await'].includes(t.text),
    );
    for (const n of names.reverse()) {
      const key = `${ft.file}#${n.text}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const memberOrConstant = /^[A-Z_][A-Z0-9_]*$/.test(n.text) || slice[slice.indexOf(n) - 1]?.text === '.';
      let defs = definitions(n.text, [ft]);
      if (defs.length === 0 && memberOrConstant) defs = definitions(n.text, files);
      const found = defs.map((d) => programs(d.ft, d.slice, seen)).filter((p): p is Spawn[] => p !== undefined);
      if (found.length > 0) return found.flat();
    }
    return undefined;
  };

  for (const ft of files) {
    const t = ft.tokens;
    const passThrough = ft.file in PASS_THROUGH;
    const runners = new Set(RUNNERS);
    const done = new Set<number>();
    // a local function handing its parameter to a runner is a runner too (host-snapshot's `out`, preflight's `probe`)
    for (let changed = true; changed; ) {
      changed = false;
      for (let k = 0; k + 1 < t.length; k++) {
        const name = t[k]!;
        if (done.has(k) || name.kind !== 'name' || !runners.has(name.text) || t[k + 1]!.text !== '(') continue;
        const method = t[k - 1]?.text === '.' || t[k - 1]?.text === '?.';
        const close = matching(t, k + 1);
        // a definition (`exec(argv: string[]) {`, `function spawn(`), not a call
        if (t[k - 1]?.text === 'function' || t[close + 1]?.text === '{' || t[close + 1]?.text === ':') continue;
        const args = pieces(t, k + 1);
        const argv = args[0];
        if (!argv || argv.length === 0) continue;
        done.add(k);
        const found = programs(ft, argv, new Set());
        if (found !== undefined) {
          spawns.push(...found);
          // `spawnSync('unshare', ['--net', ...argv])`: a prefix in front of a parameter's argv
          const prefix = found.some((s) => PREFIX_PROGRAMS.has(s.command));
          const spread = !prefix
            ? new Set<string>()
            : new Set(
                args.flatMap((a) =>
                  a.flatMap((x, n) => (a[n - 1]?.text === '...' && x.kind === 'name' ? [x.text] : [])),
                ),
              );
          const wrapper = spread.size > 0 ? enclosingFunction(t, k, spread) : undefined;
          if (wrapper?.name && !runners.has(wrapper.name)) runners.add(wrapper.name), (changed = true);
          continue;
        }
        // a method call (target.exec(argv)) with an argv from elsewhere: the program comes from a
        // caller or a scenario, both scanned on their own
        if (method) continue;
        // a parameter of an enclosing function: its callers name the program; a named local function
        // is a runner from now on (host-snapshot's `out`, preflight's `probe`)
        const params = new Set(args.flatMap((a) => a.filter((x) => x.kind === 'name').map((x) => x.text)));
        const wrapper = enclosingFunction(t, k, params);
        if (wrapper?.name && !runners.has(wrapper.name)) runners.add(wrapper.name), (changed = true);
        else if (!wrapper && !passThrough)
          unresolved.push(`${ft.file}:${name.line} ${name.text}(${argv.map((x) => x.text).join(' ')})`);
      }
    }
    if (passThrough) {
      for (let k = 0; k < t.length; k++) {
        if (t[k]!.text !== '[' || t[k]!.kind !== 'punct') continue;
        const found = programs(ft, t.slice(k, matching(t, k) + 1), new Set());
        if (found) spawns.push(...found.filter((s) => !/^-/.test(s.command)));
      }
    }
  }
  return { spawns: dedupe(spawns), unresolved };
}

/**
 * The function around `at` (`const NAME = (async) (p, ...) =>`, `function NAME(p, ...)`, or an
 * anonymous arrow) that has a parameter in `params`; undefined when there is none.
 */
function enclosingFunction(t: Token[], at: number, params: Set<string>): { name?: string } | undefined {
  for (let k = at - 1; k >= 0; k--) {
    const tok = t[k]!;
    if (tok.text !== '(' || tok.kind !== 'punct') continue;
    const close = matching(t, k);
    if (close >= at) continue;
    const after = t[close + 1]?.text;
    if (after !== '=>' && after !== '{' && after !== ':') continue;
    const declared = pieces(t, k)
      .map((p) => p[0]?.text)
      .filter((n): n is string => !!n);
    if (!declared.some((n) => params.has(n))) continue;
    let j = k - 1;
    if (t[j]?.text === 'async') j--;
    if (t[j]?.text === '=' && t[j - 1]?.kind === 'name' && ['const', 'let'].includes(t[j - 2]?.text ?? ''))
      return { name: t[j - 1]!.text };
    if (t[j]?.kind === 'name' && t[j - 1]?.text === 'function') return { name: t[j]!.text };
    return {};
  }
  return undefined;
}

function dedupe(spawns: Spawn[]): Spawn[] {
  const seen = new Set<string>();
  return spawns.filter((s) => {
    const key = `${s.command} ${s.where}`;
    return seen.has(key) ? false : (seen.add(key), true);
  });
}

/** Splits a `cmd:` string into words, honouring quotes (as the engine does). */
function words(text: string): string[] {
  return [...text.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? '');
}

/** The program of every `cmd:` in the YAML files under scenarios/; placeholders (`{bin/inject-ahead}`: lab-built helpers) left out. */
export function scanScenarioCommands(root: string): Spawn[] {
  const out: Spawn[] = [];
  const dir = join(root, 'scenarios');
  for (const name of readdirSync(dir, { recursive: true })
    .map(String)
    .filter((n) => n.endsWith('.yaml'))
    .sort()) {
    const lineCounter = new LineCounter();
    const doc = parseDocument(readFileSync(join(dir, name), 'utf8'), { lineCounter });
    visit(doc, {
      Pair(_, pair) {
        if (!isPair(pair) || !isScalar(pair.key) || pair.key.value !== 'cmd') return;
        const value = pair.value;
        const argv = isScalar(value)
          ? words(String(value.value))
          : isSeq(value)
            ? value.items.map((i) => (isScalar(i) ? String(i.value) : ''))
            : [];
        const line = lineCounter.linePos((value as { range?: [number] } | null)?.range?.[0] ?? 0).line;
        const where = `scenarios/${name}:${line}`;
        const program = argv[0] ?? '';
        if (COMMAND_WORD.test(program)) out.push({ command: program, where });
        const c = argv.indexOf('-c');
        if (SHELLS.has(program) && c === 1 && argv[2])
          out.push(...shellScriptCommands(argv[2]).map((command) => ({ command, where })));
      },
    });
  }
  return out;
}
