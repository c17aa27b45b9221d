// Which Services kube-proxy serves a health check for on a node, the count it reports, and its answer's body
// (src/dataplane/service-health.ts; the lab's server and the real kube-proxy are compared in test/lab and test/real).
import { describe, expect, it } from 'vitest';
import { endpointSlices, serviceObject } from '../../src/contract/kube-objects.ts';
import { kubeProxyLayout } from '../../src/dataplane/kube-proxy-layout.ts';
import { healthBody, healthStatus, serviceHealth } from '../../src/dataplane/service-health.ts';
import { changedService } from '../../src/model/steps/service.ts';
import { Topology } from '../../src/model/scenario-schema.ts';

const topology = Topology.parse({
  cni: 'bridge',
  nodes: [
    { name: 'node-a', podCIDR: '10.244.1.0/24' },
    { name: 'node-b', podCIDR: '10.244.2.0/24' },
  ],
  pods: [
    { name: 'a1', node: 'node-a' },
    { name: 'a2', node: 'node-a' },
    { name: 'b1', node: 'node-b' },
  ],
  services: [
    {
      name: 'web',
      type: 'LoadBalancer',
      externalTrafficPolicy: 'Local',
      healthCheckNodePort: 32000,
      loadBalancerIP: '203.0.113.20',
      clusterIP: '10.96.0.50',
      ports: [
        { name: 'http', port: 80, targetPort: 8080, nodePort: 30080 },
        { name: 'https', port: 443, targetPort: 8443, nodePort: 30443 },
      ],
      endpoints: ['a1', { pod: 'a2', ready: false }, 'b1'],
    },
    {
      name: 'cluster',
      type: 'LoadBalancer',
      loadBalancerIP: '203.0.113.21',
      clusterIP: '10.96.0.51',
      ports: [{ port: 80, targetPort: 8080, nodePort: 30081 }],
      endpoints: ['a1'],
    },
  ],
});
const placements = new Map(
  topology.pods.map((p, i) => [p.name, { ip: `10.244.${p.node === 'node-a' ? 1 : 2}.${i + 2}`, node: p.node }]),
);
const health = (node: string, services = topology.services) =>
  serviceHealth(
    kubeProxyLayout('1.20'),
    services.map(serviceObject),
    services.flatMap((s) => endpointSlices(s, placements, topology.pods)),
    node,
  );

describe("kube-proxy's service health checks", () => {
  it('only a LoadBalancer with Local policy has one; its count is the distinct ready local addresses over every port', () => {
    expect(health('node-a')).toEqual([{ namespace: 'default', name: 'web', port: 32000, localEndpoints: 1 }]);
    expect(health('node-b')).toEqual([{ namespace: 'default', name: 'web', port: 32000, localEndpoints: 1 }]);
  });

  it('answers 503 with 0 where the node has none, in the v1.20.2 body', () => {
    expect(healthStatus(0)).toBe('503 Service Unavailable');
    expect(healthStatus(2)).toBe('200 OK');
    expect(healthBody('default', 'web', 0)).toBe(
      '{\n\t"service": {\n\t\t"namespace": "default",\n\t\t"name": "web"\n\t},\n\t"localEndpoints": 0\n}',
    );
  });

  it('a service step back to Cluster policy releases the port, as the API server does; source ranges are set and deleted', () => {
    const web = topology.services[0]!;
    const cluster = changedService(web, { kind: 'service', name: 'web', externalTrafficPolicy: 'Cluster' });
    expect(cluster.healthCheckNodePort).toBeUndefined();
    expect(health('node-a', [cluster])).toEqual([]);
    const ranged = changedService(web, { kind: 'service', name: 'web', loadBalancerSourceRanges: ['10.0.0.0/8'] });
    expect(ranged.loadBalancerSourceRanges).toEqual(['10.0.0.0/8']);
    expect(
      changedService(ranged, { kind: 'service', name: 'web', loadBalancerSourceRanges: null }).loadBalancerSourceRanges,
    ).toBeUndefined();
    expect(() => changedService(web, { kind: 'service', name: 'web', type: 'NodePort' })).toThrow(/keeps its type/);
  });
});
