// run's options on a real lab: --profile rewrites every scenario as the gate does (the reports name
// it), --fail-fast starts nothing after a failure and says what it left out.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/model/package-root.ts';
import { runProcess } from '../child-process.ts';
import { labSkipReason, tempDir } from '../lab-support.ts';

const cli = (args: string[]) =>
  runProcess('node', [join(PACKAGE_ROOT, 'bin/netrepro.js'), ...args], { cwd: PACKAGE_ROOT });

describe.skipIf(labSkipReason)('run options', () => {
  it('--profile runs each scenario under the profile, and the JUnit report says which', async () => {
    const r = await cli([
      'run',
      'service-no-endpoints-reject',
      '--profile',
      'kube-proxy-1.14',
      '--quiet',
      '--junit',
      '-',
    ]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('<property name="profile" value="kube-proxy-1.14"/>');
    expect(r.stderr).toContain('1 passed, 0 failed');
  });

  it('--fail-fast starts no scenario after one failed, and says how many it left out', async () => {
    const dir = await tempDir();
    const failing = join(dir, 'fails.yaml');
    // the faulted phase expects a timeout where kube-proxy's REJECT refuses: a failure, with a culprit
    const source = await readFile(join(PACKAGE_ROOT, 'scenarios/service-no-endpoints-reject.yaml'), 'utf8');
    await writeFile(
      failing,
      source.replace(/^id: .*$/m, 'id: fails-on-purpose').replace(/^( {4}clusterip:) refused/m, '$1 timeout'),
    );
    const r = await cli([
      'run',
      failing,
      'service-no-endpoints-reject',
      'hairpin-off-pod-to-own-service',
      '--fail-fast',
      '--quiet',
    ]);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toMatch(/^ {2}failed {3}fails-on-purpose /m);
    expect(r.stdout).not.toContain('service-no-endpoints-reject');
    expect(r.stderr).toContain('--fail-fast: stopped after the first failure; 2 scenario(s) not run');
    // --quiet says why: what was expected and observed, then the culprit, and no lab set-up lines
    expect(r.stderr).toMatch(
      /faulted clusterip: expected timeout, observed refused: client -> 10\.96\.0\.20:80 = refused .*\n {4}culprit: rule filter\/KUBE-SERVICES on node-a/,
    );
    expect(r.stderr).not.toContain('  | ');
  });
});
