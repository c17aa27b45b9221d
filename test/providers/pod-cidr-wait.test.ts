// The bridge shape is configured from the Nodes' podCIDRs, which kube-controller-manager allocates only after
// `kind create` returns: the wait polls until every node has one, and says which have none when it gives up.
import { describe, expect, it } from 'vitest';
import type { ClusterNode } from '../../src/providers/real/common/kube-api.ts';
import { nodesWithPodCIDRs } from '../../src/providers/real/containers/bridge-cni.ts';

const node = (name: string, podCIDR?: string): ClusterNode => ({
  name,
  internalIP: '172.18.0.2',
  ...(podCIDR ? { podCIDR } : {}),
  kubeletVersion: 'v1.20.2',
});

/** An API whose node list answers each listed state once, then the last one for good. */
function listing(...states: ClusterNode[][]) {
  let calls = 0;
  return { listNodes: async () => states[Math.min(calls++, states.length - 1)]!, calls: () => calls };
}

describe('the wait on podCIDR allocation', () => {
  it('returns the nodes once every one has a podCIDR, not before', async () => {
    const api = listing(
      [node('cp'), node('w')],
      [node('cp', '10.244.0.0/24'), node('w')],
      [node('cp', '10.244.0.0/24'), node('w', '10.244.1.0/24')],
    );
    const nodes = await nodesWithPodCIDRs(api, { intervalMs: 1 });
    expect(nodes.map((n) => n.podCIDR)).toEqual(['10.244.0.0/24', '10.244.1.0/24']);
    expect(api.calls()).toBe(3);
  });

  it('does not take an empty node list for done', async () => {
    const api = listing([], [node('cp', '10.244.0.0/24')]);
    expect((await nodesWithPodCIDRs(api, { intervalMs: 1 })).length).toBe(1);
  });

  it('names the nodes without one when it gives up', async () => {
    const api = listing([node('cp', '10.244.0.0/24'), node('w')]);
    await expect(nodesWithPodCIDRs(api, { intervalMs: 1, timeoutMs: 20 })).rejects.toThrow(
      /no podCIDR allocated to w within 20 ms/,
    );
  });
});
