// The CLI contract: exit codes and messages other tools rely on, through the CLI's entry point in this
// process (test/unit/report-paths.test.ts and readme-examples.test.ts run it as a process).
import { cliInProcess } from '../cli-in-process.ts';
import { writeFile } from 'node:fs/promises';
import { tempDir } from '../lab-support.ts';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const cli = (...args: string[]) => cliInProcess(args);

describe('netrepro CLI', () => {
  it('lists the seed scenarios', async () => {
    const r = await cli('list');
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^br-netfilter-clusterip-same-node\s+br_netfilter off/m);
  });

  it('validate: exit 0 for the seeds, exit 2 with file:line:column and field for a bad file', async () => {
    expect((await cli('validate', 'scenarios/br-netfilter-clusterip-same-node.yaml')).exitCode).toBe(0);
    const dir = await tempDir('netrepro-cli-');
    const bad = join(dir, 'bad.yaml');
    await writeFile(bad, 'id: x\ntitle: t\ntopology:\n  cni: calico\n');
    const r = await cli('validate', bad);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      `${bad}:4:8: topology.cni: not an allowed value (received "calico", expected one of: bridge`,
    );
    expect(r.stderr).toContain(`${bad}:1:1: probes: required field is missing`);
  });

  it('run: unknown ids and bad options are invalid input (exit 2)', async () => {
    const r = await cli('run', 'no-such-scenario');
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('no scenario with id no-such-scenario');
    expect((await cli('run', '--parallel', '0', '--all')).exitCode).toBe(2);
    expect((await cli('run')).exitCode).toBe(2);
  });
});
