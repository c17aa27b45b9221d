// Service and endpoint steps: the services they produce, kube-proxy's sync (stale chains deleted, jumps
// ensured) and its UDP conntrack clean-up by release. The release ranges are what we read upstream in
// kubernetes/kubernetes: pkg/proxy/endpointschangetracker.go (<= 1.31: entries of deleted UDP endpoints,
// and of services going from no endpoints to some, cleared per change) and pkg/proxy/conntrack/cleanup.go
// (1.32, PR 127318: a reconciler that skips a service without endpoints, issue 139628, fixed by PR 139629).
import { describe, expect, it } from 'vitest';
import { IptablesModel } from '../../src/dataplane/iptables-ops.ts';
import { kubeProxyLayout } from '../../src/dataplane/kube-proxy-layout.ts';
import { kubeProxySyncOps, parseUdpFlows, rulesFor, udpConntrackDeletes } from '../../src/providers/netns/kube-proxy-sync.ts';
import { Topology } from '../../src/model/scenario-schema.ts';
import { changedEndpoints, endpointStep } from '../../src/model/steps/endpoint.ts';
import { expandStep, Step } from '../../src/model/steps/registry.ts';
import { changedService } from '../../src/model/steps/service.ts';

const topology = (protocol: 'TCP' | 'UDP', endpoints: string[]) =>
  Topology.parse({
    cni: 'bridge',
    nodes: [{ name: 'n1', podCIDR: '10.244.1.0/24' }],
    pods: [{ name: 'a', node: 'n1' }, { name: 'b', node: 'n1' }],
    services: [{ name: 'dns', clusterIP: '10.96.0.10', ports: [{ name: 'dns', port: 53, targetPort: 53, protocol }], endpoints }],
  });
const placements = new Map([
  ['a', { ip: '10.244.1.2', node: 'n1' }],
  ['b', { ip: '10.244.1.3', node: 'n1' }],
]);
const save = (t: ReturnType<typeof topology>, version = '1.29') => {
  const rules = rulesFor(t, kubeProxyLayout(version), 'n1', placements, false);
  return new IptablesModel().apply(kubeProxySyncOps(rules, new IptablesModel().save())).save();
};

describe('endpoint and service steps', () => {
  it('add, remove and set an endpoint; impossible changes throw', () => {
    const eps = [{ pod: 'a', ready: true, terminating: false }];
    expect(changedEndpoints(eps, { kind: 'endpoint', service: 's', pod: 'b', op: 'add' })).toEqual([...eps, { pod: 'b', ready: true, terminating: false }]);
    expect(changedEndpoints(eps, { kind: 'endpoint', service: 's', pod: 'a', op: 'remove' })).toEqual([]);
    expect(changedEndpoints(eps, { kind: 'endpoint', service: 's', pod: 'a', op: 'set', terminating: true })).toEqual([{ pod: 'a', ready: true, terminating: true }]);
    expect(() => changedEndpoints(eps, { kind: 'endpoint', service: 's', pod: 'b', op: 'remove' })).toThrow(/not an endpoint/);
    expect(() => changedEndpoints(eps, { kind: 'endpoint', service: 's', pod: 'a', op: 'add' })).toThrow(/already/);
  });

  it('a service patch keeps what it does not name and needs nodePorts for NodePort', () => {
    const svc = topology('TCP', ['a']).services[0]!;
    expect(changedService(svc, { kind: 'service', name: 'dns', type: 'NodePort', nodePorts: [30053] }).ports[0]!.nodePort).toBe(30053);
    expect(() => changedService(svc, { kind: 'service', name: 'dns', type: 'NodePort' })).toThrow(/nodePort/);
    const local = changedService(svc, { kind: 'service', name: 'dns', internalTrafficPolicy: 'Local' });
    expect([local.internalTrafficPolicy, local.type]).toEqual(['Local', 'ClusterIP']);
  });

  it('steps are schema-checked and expand to one lab action; remove takes no conditions', () => {
    expect(Step.safeParse({ endpoint: { service: 's', pod: 'a', op: 'remove', ready: true } }).success).toBe(false);
    expect(Step.safeParse({ endpoint: { service: 's', pod: 'a', op: 'set' } }).success).toBe(false);
    expect(expandStep(Step.parse({ endpoint: { service: 's', pod: 'a', op: 'add' } }), (r) => r)).toEqual([{ kind: 'endpoint', service: 's', pod: 'a', op: 'add' }]);
    expect(endpointStep.refs({ service: 's', pod: 'a', op: 'add' }).map((r) => r.ref)).toEqual(['svc/s', 'pod/a']);
    const hairpin = expandStep(Step.parse({ hairpin: { on: 'node/n1', pod: 'a', enabled: false } }), (r) => (r === 'veth/a' ? 'veth123' : r));
    expect(hairpin.map((c) => (c.kind === 'command' ? c.argv.join(' ') : c.kind))).toEqual(['bridge link set dev veth123 hairpin off', 'bridge -d link show dev veth123']);
    const route = expandStep(Step.parse({ route: { on: 'node/n1', to: 'default', via: 'host/gw' } }), () => '172.18.0.100');
    expect(route[0]!.kind === 'command' && route[0]!.argv.join(' ')).toBe('ip route replace default via 172.18.0.100 dev eth0');
  });
});

describe("kube-proxy's sync", () => {
  it('rewrites its chains: an endpoint gone takes its KUBE-SEP chain with it (-X), a service without endpoints gets the REJECT', () => {
    const before = save(topology('TCP', ['a', 'b']));
    expect(before.match(/^:KUBE-SEP-/gm)).toHaveLength(2);
    const t = topology('TCP', []);
    const rules = rulesFor(t, kubeProxyLayout('1.29'), 'n1', placements, false);
    const model = new IptablesModel().apply(kubeProxySyncOps(rulesFor(topology('TCP', ['a', 'b']), kubeProxyLayout('1.29'), 'n1', placements, false), ''));
    const ops = kubeProxySyncOps(rules, model.save());
    const payload = ops[0]!.op === 'restore' ? ops[0]!.payload : '';
    expect(payload.match(/^-X KUBE-(SEP|SVC)-/gm)).toHaveLength(3);
    expect(payload).toContain('default/dns:dns has no endpoints" -m tcp --dport 53 -j REJECT --reject-with icmp-port-unreachable');
    // jumps are ensured, never re-inserted
    expect(ops.slice(1).every((o) => o.op === 'ensure-first')).toBe(true);
  });
});

describe("kube-proxy's UDP conntrack clean-up", () => {
  const flows = parseUdpFlows(
    'udp      17 28 src=10.244.1.9 dst=10.96.0.10 sport=40000 dport=53 src=10.244.1.2 dst=10.244.1.9 sport=53 dport=40000 mark=0 use=1\n',
  );
  const svc = (eps: string[]) => topology('UDP', eps).services;

  it('reads conntrack -L lines', () => {
    expect(flows).toEqual([{ src: '10.244.1.9', dst: '10.96.0.10', sport: 40000, dport: 53, replySrc: '10.244.1.2' }]);
  });

  it('<= 1.31: entries DNATed to a removed endpoint are deleted, also when none is left; 0 -> N clears the VIP', () => {
    const layout = kubeProxyLayout('1.31');
    expect(udpConntrackDeletes(layout, svc(['a']), svc([]), placements, [])).toEqual([['conntrack', '-D', '--orig-dst', '10.96.0.10', '--dst-nat', '10.244.1.2', '-p', 'udp']]);
    expect(udpConntrackDeletes(layout, svc([]), svc(['b']), placements, [])).toEqual([['conntrack', '-D', '--orig-dst', '10.96.0.10', '-p', 'udp']]);
    expect(udpConntrackDeletes(layout, svc(['a']), svc(['a', 'b']), placements, [])).toEqual([]);
  });

  it('1.32: the reconciler deletes entries to anything but an endpoint, and skips a service left with none (kubernetes#139628)', () => {
    const layout = kubeProxyLayout('1.32');
    expect(udpConntrackDeletes(layout, svc(['a']), svc([]), placements, flows)).toEqual([]);
    expect(udpConntrackDeletes(layout, svc([]), svc(['b']), placements, flows)).toEqual([
      ['conntrack', '-D', '-p', 'udp', '--orig-src', '10.244.1.9', '--orig-dst', '10.96.0.10', '--sport', '40000', '--dport', '53'],
    ]);
    expect(udpConntrackDeletes(layout, svc(['a']), svc(['a', 'b']), placements, flows)).toEqual([]);
  });

  it('TCP services are never cleaned', () => {
    expect(udpConntrackDeletes(kubeProxyLayout('1.31'), topology('TCP', ['a']).services, topology('TCP', []).services, placements, flows)).toEqual([]);
  });
});
