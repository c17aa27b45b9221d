// The lab's kube-proxy health check servers (src/providers/netns/agent/health-check.c, started by
// service-health-servers.ts): in each node's namespace, answering as kube-proxy v1.20.2 does (the oracle test
// holds real kube-proxy to the same lines), and following an endpoint step.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunId, runPrefix } from '../../src/contract/run-id.ts';
import { healthBody, healthStatus } from '../../src/dataplane/service-health.ts';
import { Topology } from '../../src/model/scenario-schema.ts';
import type { NetnsLab } from '../../src/providers/netns/netns-lab.ts';
import { provisionNetnsLab } from '../../src/providers/netns/provision-netns-lab.ts';
import { labSkipReason } from '../lab-support.ts';

const topology = Topology.parse({
  cni: 'bridge',
  kubeProxy: '1.20',
  nodes: [
    { name: 'node-a', podCIDR: '10.244.1.0/24' },
    { name: 'node-b', podCIDR: '10.244.2.0/24' },
  ],
  pods: [
    { name: 'web-a', node: 'node-a', serve: [{ http: 8080 }] },
    { name: 'web-b', node: 'node-b', serve: [{ http: 8080 }] },
  ],
  services: [
    {
      name: 'web',
      type: 'LoadBalancer',
      externalTrafficPolicy: 'Local',
      healthCheckNodePort: 32100,
      clusterIP: '10.96.0.28',
      loadBalancerIP: '203.0.113.11',
      ports: [{ name: 'http', port: 80, targetPort: 8080, nodePort: 30083 }],
      endpoints: ['web-a'],
    },
  ],
});

describe.skipIf(labSkipReason)("the lab's kube-proxy health checks", () => {
  let lab: NetnsLab;
  beforeAll(async () => {
    const runId = newRunId();
    lab = await provisionNetnsLab(topology, {
      runId,
      prefix: runPrefix(runId),
      signal: new AbortController().signal,
      log: () => {},
    });
  });
  afterAll(async () => {
    await lab?.destroy();
  });

  const answer = async (node: string) => {
    const r = await lab.node('node-a').exec(['curl', '-sS', '-i', `http://${lab.address(`node/${node}`)}:32100/any`]);
    const [head = '', body] = r.stdout.split('\r\n\r\n');
    return { lines: head.split('\r\n').map((l) => l.replace(/^Date: .*/, 'Date: -')), body };
  };
  const expected = (count: number) => {
    const body = healthBody('default', 'web', count);
    return {
      lines: [
        `HTTP/1.1 ${healthStatus(count)}`,
        'Content-Type: application/json',
        'X-Content-Type-Options: nosniff',
        'Date: -',
        `Content-Length: ${body.length}`,
      ],
      body,
    };
  };

  it('answers 200 where the node has a local endpoint and 503 where it has none, as kube-proxy writes them', async () => {
    expect(await answer('node-a')).toEqual(expected(1));
    expect(await answer('node-b')).toEqual(expected(0));
  });

  it('follows an endpoint step on every node', async () => {
    await lab.perform({ kind: 'endpoint', service: 'web', pod: 'web-b', op: 'add' });
    expect(await answer('node-b')).toEqual(expected(1));
    await lab.perform({ kind: 'endpoint', service: 'web', pod: 'web-a', op: 'remove' });
    expect(await answer('node-a')).toEqual(expected(0));
  });
});
