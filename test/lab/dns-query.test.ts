// The netns lab's native dns-query (clusters/netns/agent/dns-query.c) stands in for the pod agent's
// (pod-agent.mjs, which real clusters run): both must print the same JSON for the same query.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunId, runPrefix } from '../../clusters/run-id.ts';
import type { NetnsLab } from '../../clusters/netns/netns-lab.ts';
import { provisionNetnsLab } from '../../clusters/netns/provision-netns-lab.ts';
import { parseScenario } from '../../harness/model/load-scenario.ts';
import { labSkipReason } from '../lab-support.ts';

const { topology } = parseScenario(
  `
id: t
title: t
topology:
  cni: bridge
  nodes: [{ name: a, podCIDR: 10.244.1.0/24 }]
  pods:
    - { name: client, node: a }
    - { name: dns, node: a, serve: [{ dns: 53 }] }
  services:
    - { name: dns, clusterIP: 10.96.0.10, ports: [{ port: 53, targetPort: 53, protocol: UDP }], endpoints: [dns] }
probes: [{ id: p, from: client, dns: { server: svc/dns, name: dns.default.svc.cluster.local } }]
baseline: { expect: { p: ok } }
fault: { steps: [{ endpoint: { service: dns, pod: dns, op: remove } }], expect: { p: refused } }
fixes: [{ steps: [{ endpoint: { service: dns, pod: dns, op: add } }], expect: { p: ok } }]
`,
  't.yaml',
);

describe.skipIf(labSkipReason)('native dns-query', () => {
  let lab: NetnsLab;
  beforeAll(async () => {
    const runId = newRunId();
    lab = await provisionNetnsLab(topology, { runId, prefix: runPrefix(runId), signal: new AbortController().signal, log: () => {} });
  }, 60_000);
  afterAll(() => lab?.destroy());

  const both = async (args: string[]) => {
    const run = async (argv: readonly string[]) => {
      const { durationMs: _varies, ...json } = JSON.parse((await lab.pod('client').exec([...argv, ...args])).stdout) as Record<string, unknown>;
      return json;
    };
    return { agent: await run([...lab.agentCommand, 'dns-query']), native: await run(lab.dnsQueryCommand!) };
  };

  it('is built with the lab', () => {
    expect(lab.dnsQueryCommand?.[0]).toMatch(/dns-query-[0-9a-f]{12}$/);
  });

  it('prints what the agent prints: an answer through the Service, NXDOMAIN, a fixed source port, no reply', async () => {
    for (const args of [
      ['--server=10.96.0.10', '--port=53', '--qname=dns.default.svc.cluster.local', '--timeout=1000'],
      ['--server=10.96.0.10', '--port=53', '--qname=nothing.default.svc.cluster.local', '--timeout=1000'],
      ['--server=10.96.0.10', '--port=53', '--qname=dns.default.svc.cluster.local', '--timeout=1000', '--sport=40000'],
      // nothing listens there: the port-unreachable never reaches an unconnected socket
      [`--server=${lab.address('pod/dns')}`, '--port=54', '--qname=dns.default.svc.cluster.local', '--timeout=300'],
    ]) {
      const { agent, native } = await both(args);
      expect(native, args.join(' ')).toEqual(agent);
    }
    expect((await both(['--server=10.96.0.10', '--port=53', '--qname=dns.default.svc.cluster.local', '--timeout=1000'])).native).toMatchObject({ outcome: 'ok', replies: [{ from: '10.96.0.10#53', rcode: 0, answers: ['10.96.0.10'] }] });
  });
});
