// The replay's proof on real Kubernetes v1.20.2 (`--provider local`): a scenario's own fault steps leave a real
// cluster faulted (`run --keep --stop-after`), `capture --run` reads it, `clean --run` removes it, `import` writes
// the replay and the netns lab runs it. Each replayed probe observes what the real cluster's probe to the same
// destination observed, and the replay names the fault's rule or setting as its culprit (the real cluster has no
// trace of its own to name one).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/engine/run/results.ts';
import { PACKAGE_ROOT } from '../../src/model/package-root.ts';
import { captureAndClean, expectSameOutcomes, LEFT_STATES, sourceFile } from '../capture-round-trip.ts';
import { runProcess } from '../child-process.ts';
import { tempDir } from '../lab-support.ts';
import { realSkipReason } from './real-support.ts';

const cli = (...args: string[]) =>
  runProcess('node', [join(PACKAGE_ROOT, 'bin/netrepro.js'), ...args], { cwd: PACKAGE_ROOT });

describe.skipIf(realSkipReason())('a local cluster left faulted, captured, imported and replayed on netns', () => {
  for (const c of LEFT_STATES)
    it(`${c.name}: ${c.source}'s ${c.phase} state on v1.20.2, replayed`, { timeout: 300_000 }, async () => {
      const dir = await tempDir('netrepro-local-roundtrip-');
      const t0 = performance.now();
      const kept = await cli(
        'run',
        sourceFile(c),
        '--provider',
        'local',
        '--profile',
        'kube-proxy-1.20',
        '--keep',
        '--stop-after',
        c.phase,
        '--quiet',
        '--json',
        join(dir, 'real.json'),
      );
      const report = async (f: string) => JSON.parse(await readFile(join(dir, f), 'utf8')) as RunResult;
      const runId = /kept: \S+ \[[^\]]+\] run ([0-9a-f]{6})/.exec(kept.stderr)?.[1];
      expect(runId, kept.stderr).toBeDefined();
      const t1 = performance.now();
      await captureAndClean(cli, runId!, dir, c, 'local');
      const t2 = performance.now();
      const real = (await report('real.json')).scenarios[0]!.phases.find((p) => p.name === c.phase)!;
      if (c.onV120) {
        // v1.20.2 deleted the flow's entries with the endpoint: the real cluster answers as the lab's 1.20 does,
        // the capture holds none of them, and import has nothing to probe
        const entries = await readFile(join(dir, 'bundle/nodes', `nr-${runId}-node-a`, 'conntrack.txt'), 'utf8');
        expect(entries).not.toContain(c.onV120.gone);
        for (const id of c.probes) expect(real.probes.find((p) => p.id === id)?.observed).toBe(c.onV120.observed);
        const refused = await cli('import', join(dir, 'bundle'), '-o', join(dir, 'replay.yaml'));
        expect(refused.exitCode).toBe(2);
        expect(refused.stderr).toMatch(
          /nothing to probe: .*no UDP flow from a pod to a Service among the conntrack entries/,
        );
        console.log(
          `local roundtrip ${c.name}: keep ${((t1 - t0) / 1000).toFixed(1)} s; ${c.probes.join(', ')} ${c.onV120.observed} on v1.20.2, no entry with ${c.onV120.gone} captured, import refused: ${refused.stderr.split('\n')[0]}`,
        );
        return;
      }
      const imported = await cli('import', join(dir, 'bundle'), '-o', join(dir, 'replay.yaml'));
      expect(imported.exitCode, imported.stderr).toBe(0);
      const replayed = await cli('run', join(dir, 'replay.yaml'), '--quiet', '--json', join(dir, 'replay.json'));
      const t3 = performance.now();
      const replay = (await report('replay.json')).scenarios[0]!.phases[0]!;
      expect(real, kept.stderr).toBeDefined();
      expect(replay, replayed.stderr).toBeDefined();
      const rows = expectSameOutcomes(real, replay, c, false);
      const ms = (a: number, b: number) => `${((b - a) / 1000).toFixed(1)} s`;
      console.log(
        `local roundtrip ${c.name}: keep ${ms(t0, t1)}, capture+clean ${ms(t1, t2)}, import+replay ${ms(t2, t3)}\n  ${rows.join('\n  ')}`,
      );
    });
});
