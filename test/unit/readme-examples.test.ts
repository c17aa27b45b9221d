// The output blocks of README.md and docs/ are what netrepro prints now: each is an example block
// written by `npm run docs:examples` (scripts/readme-examples.ts), its command one the CLI accepts,
// and its body what the current code prints for it: an example without a lab is run again, a lab
// example is rendered again from the run report recorded when it ran (no lab here).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { packagePath } from '../../src/model/package-root.ts';
import {
  allExampleBlocks,
  type ExampleBlock,
  exampleBlocks,
  exampleBody,
  exampleFiles,
  unmarkedOutputBlocks,
} from '../../scripts/examples/example-blocks.ts';
import { parseExampleCommand } from '../../scripts/examples/example-command.ts';
import { normaliseLabOutput } from '../../scripts/examples/normalise-output.ts';
import { type ExampleRecord, recordFile, replayExample, scenarioSets } from '../../scripts/examples/replay-example.ts';
import { exampleKind, isCondition, runExample } from '../../scripts/examples/run-example.ts';

const blocks = allExampleBlocks();

/** What each block must hold now, worked out for all of them at once (the examples without a lab run side by side). */
const expectedBodies = new Map<ExampleBlock, Promise<string>>(blocks.map((b) => [b, expectedBody(b)]));
for (const body of expectedBodies.values()) body.catch(() => {}); // each is awaited by its own test

async function expectedBody(block: ExampleBlock): Promise<string> {
  if (block.condition !== undefined && !isCondition(block.condition))
    throw new Error(`unknown condition "${block.condition}"`);
  const command = await parseExampleCommand(block.command);
  if (exampleKind(command, block.condition) === 'live') {
    const run = await runExample(command, block.condition);
    return exampleBody(block.command, run.output, run.exitCode);
  }
  const file = recordFile(block.command);
  if (!existsSync(packagePath(file))) throw new Error(`${file} is missing: run npm run docs:examples`);
  const record = JSON.parse(readFileSync(packagePath(file), 'utf8')) as ExampleRecord;
  if (record.command !== block.command) throw new Error(`${file} records \`${record.command}\`, not this command`);
  const sets = await scenarioSets(command, record);
  if (sets.recorded.join() !== sets.now.join())
    throw new Error(
      `${file} ran ${sets.recorded.join(', ')}; the command now selects ${sets.now.join(', ')} (npm run docs:examples writes it again)`,
    );
  return exampleBody(block.command, normaliseLabOutput(await replayExample(command, record)), record.exitCode);
}

describe('the example blocks of README.md and docs/', () => {
  // a live `import -o FILE` example writes its scenario where the reader would: remove it again
  afterAll(() =>
    Promise.all(
      blocks
        .flatMap((b) => b.command.match(/\bimport\b.* -o (\S+)/)?.slice(1) ?? [])
        .map((f) => rm(f, { force: true })),
    ),
  );

  it('every output block (a fence without a language) is an example block that the script writes', () => {
    const unmarked = exampleFiles().flatMap((file) =>
      unmarkedOutputBlocks(readFileSync(packagePath(file), 'utf8')).map((line) => `${file}:${line}`),
    );
    expect(unmarked).toEqual([]);
    expect(blocks.map((b) => b.file)).toEqual(expect.arrayContaining(['README.md', 'docs/real-clusters.md']));
  });

  it.each(blocks)('$file:$line `$command` shows what it prints now', async (block) => {
    expect(block.body, `npm run docs:examples -- '${block.command}' writes it again`).toBe(
      await expectedBodies.get(block),
    );
  });

  it('every record is of an example that is still there', () => {
    const records = readdirSync(packagePath('test/fixtures/readme-examples')).map(
      (name) => `test/fixtures/readme-examples/${name}`,
    );
    expect(records.filter((r) => !blocks.some((b) => recordFile(b.command) === r))).toEqual([]);
  });
});

describe('what the check refuses', () => {
  it('output outside the markers, and a marker never closed', () => {
    const text = ['```sh', 'npm test', '```', '```', '$ netrepro list', '```', '<!-- example: netrepro list -->'].join(
      '\n',
    );
    expect(unmarkedOutputBlocks(text)).toEqual([4]);
    expect(() => exampleBlocks('X.md', text)).toThrow('X.md:7: example without <!-- /example -->');
  });

  it('a command or option netrepro does not have, a missing required option, something else than netrepro', async () => {
    await expect(parseExampleCommand('netrepro run x --no-such-option')).rejects.toThrow(
      "unknown option '--no-such-option'",
    );
    await expect(parseExampleCommand('node bin/netrepro.js frobnicate')).rejects.toThrow(
      "unknown command 'frobnicate'",
    );
    await expect(parseExampleCommand('netrepro gate --baseline kube-proxy-1.14')).rejects.toThrow(
      "required option '--candidate <profile>' not specified",
    );
    await expect(parseExampleCommand('kubectl get pods')).rejects.toThrow('not a netrepro command');
  });

  it('reads shell quoting and 2>/dev/null as a shell would', async () => {
    const parsed = await parseExampleCommand("netrepro run 'conntrack-*' --cni flannel 2>/dev/null");
    expect([parsed.name, parsed.argv.slice(1), parsed.stdoutOnly]).toEqual([
      'run',
      ['conntrack-*', '--cni', 'flannel'],
      true,
    ]);
  });

  it('a real-cluster run without a condition that keeps it from starting a cluster', async () => {
    expect(() =>
      exampleKind({ argv: [], stdoutOnly: false, name: 'run', operands: [], options: { provider: 'kind' } }, undefined),
    ).toThrow('must name a condition');
  });
});

describe('what differs per lab run becomes N', () => {
  it('durations (a column keeps its width), a TCP client port, how far a cut download got; nothing else', () => {
    expect(
      normaliseLabOutput(
        [
          '  [x] lab up for fix "f" in 594 ms',
          'PASSED x (1.57 s)',
          '  passed   x     12.34 s  baseline✓',
          'tcp 10.244.1.2:42562 > 172.18.0.100:80 [ACK] dropped at 11.2 ms',
          'ok (HTTP 200; the server saw the client as 10.244.1.2:55692)',
          'udp 10.244.1.2:40000 > 10.244.1.3:53 dropped; HTTP 200, SYN-ACK from 10.96.0.20:80',
          'curl exit 56 after 1504286 of 20000000 bytes',
        ].join('\n'),
      ),
    ).toBe(
      [
        '  [x] lab up for fix "f" in N ms',
        'PASSED x (N s)',
        '  passed   x         N s  baseline✓',
        'tcp 10.244.1.2:N > 172.18.0.100:80 [ACK] dropped at N ms',
        'ok (HTTP 200; the server saw the client as 10.244.1.2:N)',
        'udp 10.244.1.2:40000 > 10.244.1.3:53 dropped; HTTP 200, SYN-ACK from 10.96.0.20:80',
        'curl exit 56 after N of 20000000 bytes',
      ].join('\n'),
    );
  });
});
