// The bad-input tests' namespace check must be able to fail: the same watch does see the lab of a
// valid scenario run by the real binary, owned by that process.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runProcess } from '../child-process.ts';
import { describe, expect, it, onTestFinished } from 'vitest';
import { labSkipReason } from '../lab-support.ts';
import { namespacesCreatedDuring } from '../namespace-watch.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe.skipIf(labSkipReason)('namespace watch', () => {
  it('sees the lab of a valid scenario run, owned by the process that ran it', async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'netrepro-watch-'));
    onTestFinished(() => rm(tmp, { recursive: true, force: true }));
    const valid = join(tmp, 'valid.yaml');
    const source = readFileSync(join(ROOT, 'test/bad-input/20-missing-required-fixes.yaml'), 'utf8');
    await writeFile(
      valid,
      `${source}fixes:\n  - name: load\n    steps:\n      - br-netfilter: { node: node-a, enabled: true }\n    expect:\n      clusterip: ok\n`,
    );
    const { value: run, created } = await namespacesCreatedDuring(async () => {
      const child = runProcess('node', ['bin/netrepro.js', 'run', valid], { cwd: ROOT, timeout: 120_000 });
      const r = await child;
      return { exitCode: r.exitCode, stderr: String(r.stderr), pid: child.pid };
    });
    expect(run.exitCode, run.stderr).toBe(0);
    const mine = created.filter((n) => n.ownerPid === run.pid).map((n) => n.ns.replace(/^nr-[0-9a-f]{6}-/, ''));
    expect(mine.sort()).toEqual(['fabric', 'n-node-a', 'p-client', 'p-web']);
  });
});
