// The whole loop a user runs, by the CLI: a scenario's lab kept in its faulted state (`run --keep --stop-after`),
// `capture --run` of it, `clean --run`, `import` of the bundle and `run` of the replay. Each replayed probe
// observes what the source scenario's probe to the same destination observed in that state, with the same
// culprit; the times are printed.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { ProbeResult, RunResult } from '../../src/engine/run/results.ts';
import { labSkipReason, tempDir } from '../lab-support.ts';

const sh = promisify(execFile);
const BIN = new URL('../../bin/netrepro.js', import.meta.url).pathname;
const SOURCES = new URL('../fixtures/capture/sources/', import.meta.url).pathname;

/** source probe id -> the imported probe to the same destination from the same client */
const SAME_DESTINATION: Record<string, string> = {
  'cross-node': 'client-web-b',
  'svc-other-node': 'client-web-80',
  'svc-same-node': 'client-local-80',
  hairpin: 'web-a-local-80',
};

const CASES = [
  { name: 'healthy', source: 'forward-drop', phase: 'baseline', culprit: undefined },
  { name: 'forward-drop', source: 'forward-drop', phase: 'faulted', culprit: '-P FORWARD DROP' },
  { name: 'br-netfilter-off', source: 'br-netfilter-off', phase: 'faulted', culprit: 'bridge-nf-call-iptables=0' },
  { name: 'no-masquerade', source: 'no-masquerade', phase: 'faulted', culprit: 'IP_LOCAL_SOURCE' },
] as const;

const culprit = (p: ProbeResult | undefined) => {
  const c = p?.diagnosis?.culprit;
  return c ? `${c.kind} ${c.where} on ${c.node}: ${c.text}`.replace(/:\d{5}\b/g, ':PORT') : undefined;
};
const cli = (...args: string[]) =>
  sh('node', [BIN, ...args], { encoding: 'utf8' }).catch((e: { stdout: string; stderr: string; code: number }) => e);

describe.skipIf(labSkipReason)('capture, import and replay a kept lab, by the CLI', () => {
  for (const c of CASES)
    it.concurrent(`${c.name}: ${c.source}'s ${c.phase} state, replayed`, { timeout: 120_000 }, async () => {
      const dir = await tempDir('netrepro-roundtrip-');
      const t0 = performance.now();
      const kept = await cli(
        'run',
        join(SOURCES, `${c.source}.yaml`),
        '--keep',
        '--stop-after',
        c.phase,
        '--json',
        join(dir, 'source.json'),
      );
      const runId = /run (\w+), left after its/.exec(kept.stderr)?.[1];
      expect(runId, kept.stderr).toBeDefined();
      const t1 = performance.now();
      try {
        const captured = await cli('capture', '--run', runId!, '--out', join(dir, 'bundle'));
        expect(captured.stderr + captured.stdout).toMatch(/captured 2 node\(s\) from lab run/);
      } finally {
        await cli('clean', '--run', runId!);
      }
      const t2 = performance.now();
      const imported = await cli('import', join(dir, 'bundle'), '-o', join(dir, 'replay.yaml'));
      expect('code' in imported ? imported.code : 0, imported.stderr).toBe(0);
      const t3 = performance.now();
      await cli('run', join(dir, 'replay.yaml'), '--json', join(dir, 'replay.json'));
      const t4 = performance.now();
      const report = async (f: string) => JSON.parse(await readFile(join(dir, f), 'utf8')) as RunResult;
      const source = (await report('source.json')).scenarios[0]!.phases.find((p) => p.name === c.phase)!;
      const replay = (await report('replay.json')).scenarios[0]!.phases[0]!;
      const rows: string[] = [];
      for (const [id, replayId] of Object.entries(SAME_DESTINATION)) {
        const before = source.probes.find((p) => p.id === id)!;
        const after = replay.probes.find((p) => p.id === replayId)!;
        expect(after.observed, `replay ${replayId} vs source ${id}`).toBe(before.observed);
        if (before.observed !== 'ok') {
          expect(culprit(after), `replay ${replayId}`).toBe(culprit(before));
          expect(culprit(after)).toContain(c.culprit);
        }
        rows.push(`${id}: ${before.observed} / ${after.observed}; culprit ${culprit(after) ?? '-'}`);
      }
      expect(replay.probes.every((p) => p.observed === 'ok')).toBe(c.name === 'healthy');
      const ms = (a: number, b: number) => `${Math.round(b - a)} ms`;
      console.log(
        `roundtrip ${c.name}: keep ${ms(t0, t1)}, capture+clean ${ms(t1, t2)}, import ${ms(t2, t3)}, replay ${ms(t3, t4)}\n  ${rows.join('\n  ')}`,
      );
    });
});
