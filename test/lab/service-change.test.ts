// Service and endpoint changes on a real lab: kube-proxy's sync rewrites the rules (read back) and its
// UDP conntrack clean-up follows the node's release: <= 1.31 deletes the entry DNATed to a removed
// endpoint, 1.32's reconciler leaves it when the service has no endpoint left (kubernetes#139628) and
// keeps the flows of every endpoint that still serves.
import { describe, expect, it } from 'vitest';
import { newRunId, runPrefix } from '../../src/contract/run-id.ts';
import { provisionNetnsLab } from '../../src/providers/netns/provision-netns-lab.ts';
import { dnsServiceTopology, labSkipReason } from '../lab-support.ts';

const topology = (kubeProxy: string) => dnsServiceTopology({ kubeProxy });

const context = (runId: string) => ({
  runId,
  prefix: runPrefix(runId),
  signal: new AbortController().signal,
  log: () => {},
});

async function entryAfterRemoval(kubeProxy: string): Promise<{ entries: string; save: string }> {
  const lab = await provisionNetnsLab(topology(kubeProxy), context(newRunId()));
  try {
    const query = await lab
      .pod('client')
      .exec([
        ...lab.agentCommand,
        'dns-query',
        '--server=10.96.0.10',
        '--port=53',
        '--qname=dns.default.svc.cluster.local',
        '--timeout=1000',
        '--sport=40000',
      ]);
    expect(JSON.parse(query.stdout).outcome).toBe('ok');
    await lab.perform({ kind: 'endpoint', service: 'dns', pod: 'dns', op: 'remove' });
    const entries = (
      await lab.node('a').exec(['conntrack', '-L', '-p', 'udp', '--orig-dst', '10.96.0.10'], { reject: false })
    ).stdout;
    return { entries, save: (await lab.node('a').exec(['iptables-save'])).stdout };
  } finally {
    await lab.destroy();
  }
}

describe.skipIf(labSkipReason)('service changes on the netns lab', () => {
  it("kube-proxy 1.31: the removed endpoint's UDP entry is deleted, the REJECT written, its chains gone", async () => {
    const { entries, save } = await entryAfterRemoval('1.31');
    expect(entries).not.toMatch(/sport=40000/);
    expect(save).toContain('default/dns has no endpoints');
    expect(save).not.toMatch(/^:KUBE-(SVC|SEP)-/m);
  });

  it('kube-proxy 1.32: the entry stays, DNATed to the removed endpoint', async () => {
    const { entries } = await entryAfterRemoval('1.32');
    expect(entries).toMatch(/sport=40000 dport=53 .*src=10\.244\.1\.3 dst=10\.244\.1\.2 sport=53 dport=40000/);
  });

  it('kube-proxy 1.32: the reconciler keeps the entry of a terminating endpoint that still serves, and deletes it once it stops serving', async () => {
    // pkg/proxy/conntrack/cleanup.go CleanStaleEntries keeps flows to every serving endpoint (kubernetes/kubernetes
    // @1601b9e27d8570364d9a1b94be16a0ca7b744a7e, lines 70-82); client .2, web .3 (a second endpoint), dns .4
    const lab = await provisionNetnsLab(dnsServiceTopology({ kubeProxy: '1.32', web: true }), context(newRunId()));
    const entry = async () =>
      (await lab.node('a').exec(['conntrack', '-L', '-p', 'udp', '--orig-dst', '10.96.0.10'], { reject: false }))
        .stdout;
    try {
      const query = await lab
        .pod('client')
        .exec([
          ...lab.agentCommand,
          'dns-query',
          '--server=10.96.0.10',
          '--port=53',
          '--qname=dns.default.svc.cluster.local',
          '--timeout=1000',
          '--sport=40000',
        ]);
      expect(JSON.parse(query.stdout).outcome).toBe('ok');
      await lab.perform({ kind: 'endpoint', service: 'dns', pod: 'web', op: 'add' });
      await lab.perform({ kind: 'endpoint', service: 'dns', pod: 'dns', op: 'set', ready: true, terminating: true });
      expect(await entry()).toMatch(/sport=40000 dport=53 .*src=10\.244\.1\.4 dst=10\.244\.1\.2 sport=53 dport=40000/);
      await lab.perform({ kind: 'endpoint', service: 'dns', pod: 'dns', op: 'set', ready: false, terminating: true });
      expect(await entry()).not.toMatch(/sport=40000/);
    } finally {
      await lab.destroy();
    }
  });

  it('an impossible change fails the step', async () => {
    const lab = await provisionNetnsLab(topology('1.29'), context(newRunId()));
    try {
      await expect(lab.perform({ kind: 'endpoint', service: 'dns', pod: 'client', op: 'remove' })).rejects.toThrow(
        /not an endpoint/,
      );
    } finally {
      await lab.destroy();
    }
  });
});
