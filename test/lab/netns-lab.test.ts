// The lab's own lifecycle: what it builds, and that every path out of it (success, failure,
// abort) leaves nothing behind.
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { newRunId, runPrefix } from '../../src/contract/run-id.ts';
import { provisionNetnsLab } from '../../src/providers/netns/provision-netns-lab.ts';
import { labNamespaces } from '../host-snapshot.ts';
import { labSkipReason, labTopology } from '../lab-support.ts';

const topology = (extra = '') =>
  labTopology(`
  cni: bridge
  nodes:
    - { name: a, podCIDR: 10.244.1.0/24${extra} }
    - { name: b, podCIDR: 10.244.2.0/24 }
  pods:
    - { name: client, node: a }
    - { name: web, node: b, serve: [{ http: 8080 }] }
  services:
    - { name: web, clusterIP: 10.96.0.20, ports: [{ port: 80, targetPort: 8080 }], endpoints: [web] }`);

const context = (runId: string, signal = new AbortController().signal) => ({
  runId,
  prefix: runPrefix(runId),
  signal,
  log: () => {},
});
const mine = async (runId: string) => (await labNamespaces()).filter((n) => n.startsWith(runPrefix(runId)));

describe.skipIf(labSkipReason)('netns lab lifecycle', () => {
  it('builds nodes, pods and routes across the fabric, then removes all of it', async () => {
    const runId = newRunId();
    const lab = await provisionNetnsLab(topology(), context(runId));
    try {
      expect((await mine(runId)).sort()).toEqual([
        `nr-${runId}-fabric`,
        `nr-${runId}-n-a`,
        `nr-${runId}-n-b`,
        `nr-${runId}-p-client`,
        `nr-${runId}-p-web`,
      ]);
      expect(lab.address('pod/client')).toBe('10.244.1.2');
      expect(lab.address('pod/web')).toBe('10.244.2.2');
      // cross-node ClusterIP through the routed fabric, answered by the pod that names itself
      const r = await lab.pod('client').exec(['curl', '-sS', '--max-time', '2', 'http://10.96.0.20/']);
      expect(r.stdout.trim()).toBe('web');
      const routes = await lab.node('a').exec(['ip', 'route']);
      expect(routes.stdout).toContain('10.244.2.0/24 via 172.18.0.3 dev eth0');
    } finally {
      await lab.destroy();
    }
    expect(await mine(runId)).toEqual([]);
    expect(existsSync(`/run/netrepro/${runId}`)).toBe(false);
  });

  it('a failure half-way through provisioning leaves nothing behind', async () => {
    const runId = newRunId();
    await expect(
      provisionNetnsLab(topology(', sysctls: { net.ipv4.no_such_sysctl: 1 }'), context(runId)),
    ).rejects.toThrow(/no_such_sysctl/);
    expect(await mine(runId)).toEqual([]);
  });

  it('an abort during provisioning tears down what was built', async () => {
    const runId = newRunId();
    const controller = new AbortController();
    const provisioning = provisionNetnsLab(topology(), context(runId, controller.signal));
    // abort as soon as the first namespace exists
    while ((await mine(runId)).length === 0) await new Promise((r) => setImmediate(r));
    controller.abort();
    await expect(provisioning).rejects.toThrow();
    expect(await mine(runId)).toEqual([]);
  });
});
