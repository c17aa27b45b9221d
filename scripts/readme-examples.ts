// `npm run docs:examples [-- WORD...]`: runs the command of every example block in README.md and
// docs/**/*.md (scripts/examples/example-blocks.ts; with WORDs, only those whose command contains one)
// for real, in this checkout, and writes its output between the markers. A lab example (`run`, `gate`
// on the netns lab) also gets `--json FILE`, kept in test/fixtures/readme-examples/ as the record
// test/unit/readme-examples.test.ts renders the block from again; the script refuses to write a block
// that record does not reproduce byte for byte, and its block has what differs per run replaced by N
// (scripts/examples/normalise-output.ts). Examples without a lab are written exactly as printed.
import { mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { PACKAGE_ROOT, packagePath } from '../src/model/package-root.ts';
import type { RunResult } from '../src/engine/run/results.ts';
import { type ExampleBlock, exampleBlocks, exampleBody, exampleFiles, withBodies } from './examples/example-blocks.ts';
import { parseExampleCommand } from './examples/example-command.ts';
import { normaliseLabOutput } from './examples/normalise-output.ts';
import { type ExampleRecord, recordFile, replayExample } from './examples/replay-example.ts';
import { exampleKind, isCondition, runExample } from './examples/run-example.ts';

/** Report flags a lab example may not carry: the recording adds its own --json, and none writes into the checkout. */
const REPORT_OPTIONS = ['json', 'junit', 'markdown', 'html', 'reportDir'];

const words = process.argv.slice(2);
/** The records written by this run; without WORDs, every other record is of an example that is gone. */
const recorded = new Set<string>();
const wanted = (block: ExampleBlock) => words.length === 0 || words.some((w) => block.command.includes(w));

async function regenerate(block: ExampleBlock): Promise<string> {
  const where = `${block.file}:${block.line}`;
  if (block.condition !== undefined && !isCondition(block.condition))
    throw new Error(`${where}: unknown condition "${block.condition}"`);
  const command = await parseExampleCommand(block.command).catch((e: Error) => {
    throw new Error(`${where}: ${block.command}: ${e.message}`);
  });
  if (exampleKind(command, block.condition) === 'live') {
    const run = await runExample(command, block.condition);
    return exampleBody(block.command, run.output, run.exitCode);
  }
  const flag = REPORT_OPTIONS.find((o) => command.options[o] !== undefined);
  if (flag) throw new Error(`${where}: a lab example writes no report of its own (--${flag})`);
  const scratch = mkdtempSync(join(tmpdir(), 'netrepro-example-'));
  try {
    const json = join(scratch, 'report.json');
    const run = await runExample(command, block.condition, ['--json', json]);
    if (run.exitCode === 3) throw new Error(`${where}: the lab cannot run here:\n${run.output}`);
    const report = JSON.parse(readFileSync(json, 'utf8')) as RunResult;
    // the record is committed: scenario files as paths in this repository
    for (const s of report.scenarios ?? []) if ('file' in s) s.file = relative(PACKAGE_ROOT, s.file);
    const record: ExampleRecord = { command: block.command, exitCode: run.exitCode, report };
    const replayed = await replayExample(command, record);
    if (replayed !== run.output)
      throw new Error(
        `${where}: the record does not reproduce what the run printed (scripts/examples/replay-example.ts is behind the engine or a reporter)\n--- printed\n${run.output}\n--- replayed\n${replayed}`,
      );
    writeFileSync(packagePath(recordFile(block.command)), `${JSON.stringify(record, null, 2)}\n`);
    recorded.add(recordFile(block.command));
    return exampleBody(block.command, normaliseLabOutput(run.output), run.exitCode);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

for (const file of exampleFiles()) {
  const text = readFileSync(packagePath(file), 'utf8');
  const bodies = new Map<number, string>();
  for (const block of exampleBlocks(file, text)) {
    if (!wanted(block)) continue;
    const started = performance.now();
    bodies.set(block.line, await regenerate(block));
    process.stderr.write(
      `${file}:${block.line}: ${block.command} (${((performance.now() - started) / 1000).toFixed(1)} s)\n`,
    );
  }
  const updated = withBodies(text, bodies);
  if (updated !== text) writeFileSync(packagePath(file), updated);
}
// records of examples that are gone
if (words.length === 0)
  for (const name of readdirSync(packagePath('test/fixtures/readme-examples'))) {
    const file = `test/fixtures/readme-examples/${name}`;
    if (!recorded.has(file)) unlinkSync(packagePath(file));
  }
