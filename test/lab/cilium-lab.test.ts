// The cilium shape leaves nothing behind: no BPF program, pin, cgroup, namespace or tc filter.
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCommand } from '../../src/contract/command.ts';
import { provisionNetnsLab } from '../../src/providers/netns/provision-netns-lab.ts';
import { newRunId, runPrefix } from '../../src/contract/run-id.ts';
import { loadAllScenarios } from '../../src/model/find-scenarios.ts';
import { labNamespaces } from '../host-snapshot.ts';
import { labSkipReason } from '../lab-support.ts';

const stale = (await loadAllScenarios()).find((s) => s.scenario.id === 'stale-sock-lb-program')!.scenario.topology;

async function programGone(id: number): Promise<boolean> {
  // the kernel frees a program some milliseconds after its last reference goes: poll, bounded
  for (let i = 0; i < 100; i++) {
    if ((await runCommand(['bpftool', 'prog', 'show', 'id', String(id)], { reject: false })).exitCode !== 0)
      return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

describe.skipIf(labSkipReason)('cilium shape cleanup', () => {
  it('removes programs, pins, the cgroup and the namespaces on teardown', async () => {
    const runId = newRunId();
    const lab = await provisionNetnsLab(
      { ...stale, cilium: { ...stale.cilium, bpfMasquerade: true, socketLB: true } },
      { runId, prefix: runPrefix(runId), signal: new AbortController().signal, log: () => {} },
    );
    const node = lab.node('node-a');
    const ids: number[] = [];
    try {
      for (const pin of [
        'masq/nr_masq_egress',
        'masq/nr_masq_ingress',
        'sock-current/cil_sock4_connect',
        'sock-current/cil_sock4_recvmsg',
      ]) {
        const r = await node.exec([
          'bpftool',
          '--nomount',
          '-j',
          'prog',
          'show',
          'pinned',
          `/sys/fs/bpf/netrepro/${pin}`,
        ]);
        ids.push((JSON.parse(r.stdout) as { id: number }).id);
      }
      const filters = await node.exec(['tc', 'filter', 'show', 'dev', 'eth0', 'egress']);
      expect(filters.stdout).toContain('nr_masq_egress');
      expect(existsSync(lab.path('cgroup/node-a'))).toBe(true);
      // the private bpffs is invisible from the root mount namespace
      expect(existsSync('/sys/fs/bpf/netrepro')).toBe(false);
    } finally {
      await lab.destroy();
    }
    for (const id of ids) expect(await programGone(id)).toBe(true);
    expect(existsSync(`/sys/fs/cgroup/unified/netrepro/${runId}`)).toBe(false);
    expect((await labNamespaces()).filter((n) => n.startsWith(runPrefix(runId)))).toEqual([]);
  });
});
