// The EndpointSlices the lab's kube-proxy reads, grouped as the EndpointSlice controller groups them: by the
// ports each pod resolves, so a named targetPort splits a Service's endpoints pod by pod.
import { describe, expect, it } from 'vitest';
import { dnsRecords } from '../../src/contract/agent-program.ts';
import { endpointSlices, publishedReady, targetPortOf } from '../../src/contract/kube-objects.ts';
import { parseScenario } from '../../src/model/load-scenario.ts';

const topology = (ports: string) =>
  parseScenario(
    `id: t
title: t
topology:
  cni: bridge
  nodes: [{ name: n1, podCIDR: 10.244.1.0/24 }]
  pods:
    - { name: p1, node: n1, ports: [{ name: svc1, containerPort: 100 }] }
    - { name: p2, node: n1, ports: [{ name: svc2, containerPort: 101 }, { name: svc1, containerPort: 102, protocol: UDP }] }
  services:
    - name: s
      clusterIP: 10.96.0.80
      ports: ${ports}
      endpoints: [p1, p2]
probes: [{ id: a, from: p1, http: { to: pod/p2, port: 101 } }]
baseline: { expect: { a: ok } }
fault: { steps: [{ run: { on: pod/p1, cmd: 'true' } }], expect: { a: timeout } }
fixes: [{ name: f, steps: [{ run: { on: pod/p1, cmd: 'true' } }], expect: { a: ok } }]
`,
    't.yaml',
  ).topology;
const placements = new Map([
  ['p1', { ip: '10.244.1.2', node: 'n1' }],
  ['p2', { ip: '10.244.1.3', node: 'n1' }],
]);

describe('endpoint slices', () => {
  it('resolves a named targetPort pod by pod (same protocol only) and groups pods by the ports they resolve', () => {
    const t = topology('[{ name: one, port: 80, targetPort: svc1 }, { name: two, port: 81, targetPort: svc2 }]');
    const [svc] = t.services;
    expect(targetPortOf(svc!.ports[0]!, t.pods[0])).toBe(100);
    // p2's svc1 is UDP: no TCP port of that name
    expect(targetPortOf(svc!.ports[0]!, t.pods[1])).toBeUndefined();
    const slices = endpointSlices(svc!, placements, t.pods);
    expect(slices.map((s) => [s.ports, s.endpoints.map((e) => e.addresses[0])])).toEqual([
      [[{ name: 'one', port: 100, protocol: 'TCP' }], ['10.244.1.2']],
      [[{ name: 'two', port: 101, protocol: 'TCP' }], ['10.244.1.3']],
    ]);
    expect(new Set(slices.map((s) => s.metadata?.name)).size).toBe(2);
  });

  it('keeps one slice for numeric targetPorts, and one without ports or endpoints when nothing resolves', () => {
    const numeric = topology('[{ port: 80, targetPort: 8080 }]');
    expect(endpointSlices(numeric.services[0]!, placements, numeric.pods)).toHaveLength(1);
    const nowhere = topology('[{ port: 80, targetPort: nope }]');
    expect(endpointSlices(nowhere.services[0]!, placements, nowhere.pods)).toMatchObject([
      { ports: [], endpoints: [] },
    ]);
  });

  it('publishes a not-ready or terminating endpoint as ready only where the Service publishes not-ready addresses', () => {
    const e = (ready: boolean, terminating: boolean) => ({ ready, terminating });
    const off = { publishNotReadyAddresses: false };
    const on = { publishNotReadyAddresses: true };
    expect([e(true, false), e(false, false), e(true, true)].map((x) => publishedReady(off, x))).toEqual([
      true,
      false,
      false,
    ]);
    expect([e(true, false), e(false, false), e(true, true)].map((x) => publishedReady(on, x))).toEqual([
      true,
      true,
      true,
    ]);
  });

  it("the cluster DNS answers a Service's name with its ClusterIP, a headless one's with its published endpoints", () => {
    const t = topology('[{ port: 80, targetPort: 8080 }]');
    const svc = t.services[0]!;
    const ip = (pod: string) => placements.get(pod)!.ip;
    expect(dnsRecords(t, () => '10.96.0.80', ip)).toEqual(['s.default.svc.cluster.local=10.96.0.80']);
    const headless = {
      ...t,
      services: [
        { ...svc, clusterIP: 'None', endpoints: [svc.endpoints[0]!, { pod: 'p2', ready: false, terminating: false }] },
      ],
    };
    expect(dnsRecords(headless, () => '', ip)).toEqual(['s.default.svc.cluster.local=10.244.1.2']);
    const published = { ...headless, services: [{ ...headless.services[0]!, publishNotReadyAddresses: true }] };
    expect(dnsRecords(published, () => '', ip)).toEqual([
      's.default.svc.cluster.local=10.244.1.2',
      's.default.svc.cluster.local=10.244.1.3',
    ]);
  });
});
