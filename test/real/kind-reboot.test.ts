// A kind node's reboot for real: `docker restart` of its container on the cluster's own engine, then what the
// provider brings back in order (kube-proxy, the workload). The node keeps its address, its container really
// restarted, kube-proxy's rules are back, and a client on the other node reaches the rebooted node's pod through
// its Service again.
import { describe, expect, it } from 'vitest';
import { Topology } from '../../src/model/scenario-schema.ts';
import { newRunId, runPrefix } from '../../src/contract/run-id.ts';
import { runCommand } from '../../src/contract/command.ts';
import { KindProvider } from '../../src/providers/real/containers/kind/kind-provider.ts';
import { kindSkipReason } from './real-support.ts';

const skip = kindSkipReason();

const topology = Topology.parse({
  cni: 'bridge',
  kubeProxy: '1.20',
  nodes: [
    { name: 'node-a', podCIDR: '10.244.1.0/24' },
    { name: 'node-b', podCIDR: '10.244.2.0/24' },
  ],
  pods: [
    { name: 'client', node: 'node-a' },
    { name: 'web', node: 'node-b', serve: [{ http: 8080 }] },
  ],
  services: [
    { name: 'web', clusterIP: '10.96.0.20', ports: [{ name: 'http', port: 80, targetPort: 8080 }], endpoints: ['web'] },
  ],
});

describe.skipIf(skip)(`a kind node reboots by docker restart${skip ? ` (skipped: ${skip})` : ''}`, () => {
  it('comes back with its address, kube-proxy rules and workload, and serves across nodes again', async () => {
    const runId = newRunId();
    const logs: string[] = [];
    const provider = new KindProvider({ kindEngine: 'private', k8sVersion: 'v1.20.2' });
    const cluster = await provider.provision(topology, {
      runId,
      prefix: runPrefix(runId),
      signal: new AbortController().signal,
      log: (l) => logs.push(l),
    });
    try {
      const node = cluster.node('node-b');
      const svc = cluster.address('svc/web');
      const get = () =>
        cluster
          .pod('client')
          .exec(['curl', '-s', '-m', '3', '-o', '/dev/null', '-w', '%{http_code}', `http://${svc}:80/`], {
            reject: false,
          });
      const started = async () => (await node.exec(['cat', '/proc/1/stat'])).stdout.split(' ')[21];
      expect((await get()).stdout).toBe('200');
      const eth0 = async () => (await node.exec(['ip', '-4', '-o', 'addr', 'show', 'eth0'])).stdout.split(/\s+/)[3];
      const address = await eth0();
      const bootBefore = await started();

      await cluster.perform({ kind: 'reboot', node: 'node-b' });

      expect(await started()).not.toBe(bootBefore); // a new PID 1: the container restarted
      expect(await eth0()).toBe(address);
      expect((await node.exec(['iptables-save', '-t', 'nat'])).stdout).toMatch(/-A KUBE-SERVICES .* -j KUBE-SVC-/);
      expect((await get()).stdout).toBe('200');
      expect(logs.some((l) => /reboot .*docker restart/.test(l))).toBe(true);
    } finally {
      await cluster[Symbol.asyncDispose]();
    }
    const left = await runCommand(['ip', 'netns', 'list'], { reject: false });
    expect(left.stdout).not.toContain(runPrefix(runId));
  });
});
