// The example blocks of README.md and docs/**/*.md: a fenced block of command output between
//   <!-- example: COMMAND -->            or  <!-- example CONDITION: COMMAND -->
//   ```
//   $ COMMAND
//   output
//   ```
//   <!-- /example -->
// `npm run docs:examples` rewrites what is between the markers; a fence without a language anywhere
// else is output nobody regenerates, which test/unit/readme-examples.test.ts refuses.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/model/package-root.ts';

export interface ExampleBlock {
  /** The Markdown file, relative to the package root. */
  file: string;
  /** 1-based line of the opening marker. */
  line: number;
  /** The command as the reader types it (`node bin/netrepro.js run ...`). */
  command: string;
  /** Where it runs, when not the machine as it is (a key of CONDITIONS in run-example.ts). */
  condition?: string;
  /** What is between the markers now. */
  body: string;
}

const OPEN = /^<!-- example(?: ([^:]+))?: (.+?) -->$/;
const CLOSE = '<!-- /example -->';

/** README.md and every Markdown file under docs/, relative to the package root. */
export function exampleFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(PACKAGE_ROOT, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
    );
  return ['README.md', ...walk('docs')];
}

/** The example blocks of one Markdown text; a marker without its closing one is an error naming the line. */
export function exampleBlocks(file: string, text: string): ExampleBlock[] {
  const lines = text.split('\n');
  const blocks: ExampleBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = OPEN.exec(lines[i]!);
    if (!open) continue;
    const close = lines.indexOf(CLOSE, i + 1);
    const next = lines.findIndex((l, j) => j > i && OPEN.test(l));
    if (close < 0 || (next >= 0 && next < close)) throw new Error(`${file}:${i + 1}: example without ${CLOSE}`);
    blocks.push({
      file,
      line: i + 1,
      condition: open[1],
      command: open[2]!,
      body: lines.slice(i + 1, close).join('\n'),
    });
    i = close;
  }
  return blocks;
}

/** The text with each block's body replaced by `bodies` (by opening line), everything else as it was. */
export function withBodies(text: string, bodies: ReadonlyMap<number, string>): string {
  const lines = text.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    out.push(lines[i]!);
    const body = bodies.get(i + 1);
    if (body === undefined) continue;
    out.push(body);
    i = lines.indexOf(CLOSE, i + 1) - 1;
  }
  return out.join('\n');
}

/** The fenced block a body holds: the command after `$ `, its output, and the exit status when not 0. */
export function exampleBody(command: string, output: string, exitCode: number): string {
  const text = output.endsWith('\n') || output === '' ? output : `${output}\n`;
  return ['```', `$ ${command}`, `${text}${exitCode === 0 ? '' : `(exit ${exitCode})\n`}\`\`\``].join('\n');
}

/** 1-based lines of fences without a language (command output) outside every example block. */
export function unmarkedOutputBlocks(text: string): number[] {
  const lines = text.split('\n');
  const found: number[] = [];
  let inExample = false;
  let fence: string | undefined;
  lines.forEach((line, i) => {
    if (OPEN.test(line)) inExample = true;
    if (line === CLOSE) inExample = false;
    const opening = /^(\s*)(```+)(\S*)/.exec(line);
    if (!opening) return;
    if (fence !== undefined) {
      if (line.trim().startsWith(fence)) fence = undefined;
      return;
    }
    fence = opening[2]!;
    if (opening[3] === '' && !inExample) found.push(i + 1);
  });
  return found;
}

/** Every example block of README.md and docs/, read from disk. */
export function allExampleBlocks(): ExampleBlock[] {
  return exampleFiles().flatMap((file) => exampleBlocks(file, readFileSync(join(PACKAGE_ROOT, file), 'utf8')));
}
