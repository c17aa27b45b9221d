// The whole loop a user runs, by the CLI: a scenario's lab kept in its faulted state (`run --keep --stop-after`),
// `capture --run` of it, `clean --run`, `import` of the bundle and `run` of the replay. Each replayed probe
// observes what the source scenario's probe to the same destination observed in that state, with the same
// culprit; the times are printed.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/engine/run/results.ts';
import { captureAndClean, expectSameOutcomes, LEFT_STATES, sourceFile } from '../capture-round-trip.ts';
import { cliInProcess } from '../cli-in-process.ts';
import { labSkipReason, tempDir } from '../lab-support.ts';

const sh = promisify(execFile);
const BIN = new URL('../../bin/netrepro.js', import.meta.url).pathname;
const cli = (...args: string[]) =>
  sh('node', [BIN, ...args], { encoding: 'utf8' }).catch((e: { stdout: string; stderr: string; code: number }) => e);
/** capture, clean and import in this process: a Node start each would cost more than the command */
const inProcess = (...args: string[]) => cliInProcess(args);

describe.skipIf(labSkipReason)('capture, import and replay a kept lab, by the CLI', () => {
  for (const c of LEFT_STATES)
    it(`${c.name}: ${c.source}'s ${c.phase} state, replayed`, { timeout: 120_000 }, async () => {
      const dir = await tempDir('netrepro-roundtrip-');
      const t0 = performance.now();
      const kept = await cli(
        'run',
        sourceFile(c),
        '--keep',
        '--stop-after',
        c.phase,
        '--json',
        join(dir, 'source.json'),
      );
      const runId = /run (\w+), left after its/.exec(kept.stderr)?.[1];
      expect(runId, kept.stderr).toBeDefined();
      // the source showed what its own scenario expects in that phase
      expect(kept.stderr).toContain(`left after its ${c.phase} phase (passed)`);
      const t1 = performance.now();
      await captureAndClean(inProcess, runId!, dir, c, 'lab');
      const t2 = performance.now();
      const imported = await inProcess('import', join(dir, 'bundle'), '-o', join(dir, 'replay.yaml'));
      expect(imported.exitCode, imported.stderr).toBe(0);
      const t3 = performance.now();
      const replayed = await cli('run', join(dir, 'replay.yaml'), '--json', join(dir, 'replay.json'));
      const t4 = performance.now();
      const report = async (f: string) => JSON.parse(await readFile(join(dir, f), 'utf8')) as RunResult;
      const source = (await report('source.json')).scenarios[0]!.phases.find((p) => p.name === c.phase)!;
      const replay = (await report('replay.json')).scenarios[0]!.phases[0]!;
      expect(source, kept.stderr).toBeDefined();
      expect(replay, replayed.stderr).toBeDefined();
      const rows = expectSameOutcomes(source, replay, c, true);
      const ms = (a: number, b: number) => `${Math.round(b - a)} ms`;
      console.log(
        `roundtrip ${c.name}: keep ${ms(t0, t1)}, capture+clean ${ms(t1, t2)}, import ${ms(t2, t3)}, replay ${ms(t3, t4)}\n  ${rows.join('\n  ')}`,
      );
    });
});
