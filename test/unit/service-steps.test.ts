// Service and endpoint steps: the services they produce, kube-proxy's sync (stale chains deleted, jumps
// ensured) and its UDP conntrack clean-up by release. The release ranges are what we read upstream in
// kubernetes/kubernetes: pkg/proxy/endpointschangetracker.go (<= 1.31: entries of deleted UDP endpoints,
// and of services going from no endpoints to some, cleared per change) and pkg/proxy/conntrack/cleanup.go
// (1.32, kubernetes#127318: a reconciler that skips a service without endpoints, kubernetes#139628, fixed by kubernetes#139629).
import { describe, expect, it } from 'vitest';
import { IptablesModel } from '../../src/dataplane/iptables-ops.ts';
import { kubeProxyLayout } from '../../src/dataplane/kube-proxy-layout.ts';
import {
  kubeProxySyncOps,
  parseUdpFlows,
  rulesFor,
  udpConntrackDeletes,
} from '../../src/providers/netns/kube-proxy-sync.ts';
import { Topology } from '../../src/model/scenario-schema.ts';
import { changedEndpoints, endpointStep } from '../../src/model/steps/endpoint.ts';
import { expandStep, Step } from '../../src/model/steps/registry.ts';
import { changedService } from '../../src/model/steps/service.ts';

const topology = (protocol: 'TCP' | 'UDP', endpoints: string[]) =>
  Topology.parse({
    cni: 'bridge',
    nodes: [{ name: 'n1', podCIDR: '10.244.1.0/24' }],
    pods: [
      { name: 'a', node: 'n1' },
      { name: 'b', node: 'n1' },
    ],
    services: [
      { name: 'dns', clusterIP: '10.96.0.10', ports: [{ name: 'dns', port: 53, targetPort: 53, protocol }], endpoints },
    ],
  });
/** kube-proxy of `release` with the topology's cluster CIDR. */
const proxy = (release: string) => ({ release, clusterCIDR: '10.244.0.0/16', masqueradeAll: false });
const placements = new Map([
  ['a', { ip: '10.244.1.2', node: 'n1' }],
  ['b', { ip: '10.244.1.3', node: 'n1' }],
]);
const save = (t: ReturnType<typeof topology>, version = '1.29') => {
  const rules = rulesFor(t, proxy(version), 'n1', placements, false);
  return new IptablesModel().apply(kubeProxySyncOps(rules, new IptablesModel().save())).save();
};

describe('endpoint and service steps', () => {
  it('add, remove and set an endpoint; impossible changes throw', () => {
    const eps = [{ pod: 'a', ready: true, terminating: false }];
    expect(changedEndpoints(eps, { kind: 'endpoint', service: 's', pod: 'b', op: 'add' })).toEqual([
      ...eps,
      { pod: 'b', ready: true, terminating: false },
    ]);
    expect(changedEndpoints(eps, { kind: 'endpoint', service: 's', pod: 'a', op: 'remove' })).toEqual([]);
    expect(changedEndpoints(eps, { kind: 'endpoint', service: 's', pod: 'a', op: 'set', terminating: true })).toEqual([
      { pod: 'a', ready: true, terminating: true },
    ]);
    expect(() => changedEndpoints(eps, { kind: 'endpoint', service: 's', pod: 'b', op: 'remove' })).toThrow(
      /not an endpoint/,
    );
    expect(() => changedEndpoints(eps, { kind: 'endpoint', service: 's', pod: 'a', op: 'add' })).toThrow(/already/);
  });

  it('a service patch keeps what it does not name and needs nodePorts for NodePort', () => {
    const svc = topology('TCP', ['a']).services[0]!;
    expect(
      changedService(svc, { kind: 'service', name: 'dns', type: 'NodePort', nodePorts: [30053] }).ports[0]!.nodePort,
    ).toBe(30053);
    expect(() => changedService(svc, { kind: 'service', name: 'dns', type: 'NodePort' })).toThrow(/nodePort/);
    const local = changedService(svc, { kind: 'service', name: 'dns', internalTrafficPolicy: 'Local' });
    expect([local.internalTrafficPolicy, local.type]).toEqual(['Local', 'ClusterIP']);
  });

  it('a service patch sets session affinity (off again drops its timeout) and replaces the port list', () => {
    const svc = topology('TCP', ['a']).services[0]!;
    const sticky = changedService(svc, {
      kind: 'service',
      name: 'dns',
      sessionAffinity: 'ClientIP',
      sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } },
    });
    expect([sticky.sessionAffinity, sticky.sessionAffinityConfig?.clientIP.timeoutSeconds]).toEqual(['ClientIP', 60]);
    const off = changedService(sticky, { kind: 'service', name: 'dns', sessionAffinity: 'None' });
    expect([off.sessionAffinity, off.sessionAffinityConfig]).toEqual(['None', undefined]);
    expect(() =>
      changedService(svc, {
        kind: 'service',
        name: 'dns',
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } },
      }),
    ).toThrow(/ClientIP/);
    const both = changedService(svc, {
      kind: 'service',
      name: 'dns',
      ports: [
        { name: 'tcp', port: 53, targetPort: 53, protocol: 'TCP' },
        { name: 'udp', port: 53, targetPort: 53, protocol: 'UDP' },
      ],
    });
    expect(both.ports.map((p) => `${p.port}/${p.protocol}`)).toEqual(['53/TCP', '53/UDP']);
    expect(() =>
      changedService(svc, {
        kind: 'service',
        name: 'dns',
        ports: [{ port: 53, targetPort: 53, protocol: 'TCP', nodePort: 30053 }],
      }),
    ).toThrow(/NodePort/);
    expect(
      Step.safeParse({
        service: {
          name: 'dns',
          ports: [
            { name: 'x', port: 53, targetPort: 53 },
            { name: 'x', port: 54, targetPort: 54 },
          ],
        },
      }).success,
    ).toBe(false);
    expect(
      Step.safeParse({
        service: {
          name: 'dns',
          ports: [
            { name: 'x', port: 53, targetPort: 53 },
            { name: 'y', port: 53, targetPort: 54 },
          ],
        },
      }).success,
    ).toBe(false);
  });

  it('steps are schema-checked and expand to one lab action; remove takes no conditions', () => {
    expect(Step.safeParse({ endpoint: { service: 's', pod: 'a', op: 'remove', ready: true } }).success).toBe(false);
    expect(Step.safeParse({ endpoint: { service: 's', pod: 'a', op: 'set' } }).success).toBe(false);
    expect(expandStep(Step.parse({ endpoint: { service: 's', pod: 'a', op: 'add' } }), (r) => r)).toEqual([
      { kind: 'endpoint', service: 's', pod: 'a', op: 'add' },
    ]);
    expect(endpointStep.refs({ service: 's', pod: 'a', op: 'add' }).map((r) => r.ref)).toEqual(['svc/s', 'pod/a']);
    const hairpin = expandStep(Step.parse({ hairpin: { on: 'node/n1', pod: 'a', enabled: false } }), (r) =>
      r === 'veth/a' ? 'veth123' : r,
    );
    expect(hairpin.map((c) => (c.kind === 'command' ? c.argv.join(' ') : c.kind))).toEqual([
      'bridge link set dev veth123 hairpin off',
      'bridge -d link show dev veth123',
    ]);
    const route = expandStep(
      Step.parse({ route: { on: 'node/n1', to: 'default', via: 'host/gw' } }),
      () => '172.18.0.100',
    );
    expect(route[0]!.kind === 'command' && route[0]!.argv.join(' ')).toBe(
      'ip route replace default via 172.18.0.100 dev eth0',
    );
    // a gateway outside every subnet of the device: onlink, and the read-back requires the flag
    const onlink = expandStep(
      Step.parse({ route: { on: 'node/n1', to: 'default', via: '10.9.9.1', onlink: true } }),
      (r) => r,
    );
    expect(onlink.map((c) => (c.kind === 'command' ? [c.argv.join(' '), c.expect.prints] : c.kind))).toEqual([
      ['ip route replace default via 10.9.9.1 dev eth0 onlink', undefined],
      ['ip route show default', 'via 10.9.9.1 dev eth0.* onlink'],
    ]);
    expect(Step.safeParse({ route: { on: 'node/n1', to: 'default', onlink: true } }).success).toBe(false);
    // deleted: narrowed by gateway and device where given, and read back as gone (the show prints nothing)
    const gone = (route: object) =>
      expandStep(Step.parse({ route: { on: 'node/n1', op: 'delete', ...route } }), () => '10.0.0.1').map((c) =>
        c.kind === 'command' ? [c.argv.join(' '), c.expect] : c.kind,
      );
    expect(gone({ to: 'default' })).toEqual([
      ['ip route del default', { exit: 0 }],
      ['ip route show exact 0.0.0.0/0', { exit: 0, silent: true }],
    ]);
    expect(gone({ to: '10.244.2.0/24', via: 'node/n2', dev: 'flannel.1' })).toEqual([
      ['ip route del 10.244.2.0/24 via 10.0.0.1 dev flannel.1', { exit: 0 }],
      ['ip route show exact 10.244.2.0/24 via 10.0.0.1 dev flannel.1', { exit: 0, silent: true }],
    ]);
    expect(
      Step.safeParse({ route: { on: 'node/n1', op: 'delete', to: 'default', via: '10.9.9.1', onlink: true } }).success,
    ).toBe(false);
    // the cluster's Service range, as its {cidr/services} resolves
    const services = expandStep(Step.parse({ route: { on: 'node/n1', to: 'services' } }), (ref) =>
      ref === 'cidr/services' ? '10.96.0.0/16' : ref,
    );
    expect(services.map((c) => (c.kind === 'command' ? c.argv.join(' ') : c.kind))).toEqual([
      'ip route replace 10.96.0.0/16 dev eth0',
      'ip route show 10.96.0.0/16',
    ]);
  });
});

describe("kube-proxy's sync", () => {
  it('rewrites its chains: an endpoint gone takes its KUBE-SEP chain with it (-X), a service without endpoints gets the REJECT', () => {
    const before = save(topology('TCP', ['a', 'b']));
    expect(before.match(/^:KUBE-SEP-/gm)).toHaveLength(2);
    const t = topology('TCP', []);
    const rules = rulesFor(t, proxy('1.29'), 'n1', placements, false);
    const model = new IptablesModel().apply(
      kubeProxySyncOps(rulesFor(topology('TCP', ['a', 'b']), proxy('1.29'), 'n1', placements, false), ''),
    );
    const ops = kubeProxySyncOps(rules, model.save());
    const payload = ops[0]!.op === 'restore' ? ops[0]!.payload : '';
    expect(payload.match(/^-X KUBE-(SEP|SVC)-/gm)).toHaveLength(3);
    expect(payload).toContain(
      'default/dns:dns has no endpoints" -m tcp --dport 53 -j REJECT --reject-with icmp-port-unreachable',
    );
    // jumps are ensured, never re-inserted
    expect(ops.slice(1).every((o) => o.op === 'ensure-first')).toBe(true);
  });

  it('a port change writes the new protocol next to the old one; affinity rules are written again by every sync', () => {
    const t = topology('TCP', ['a']);
    const both = {
      ...t,
      services: [
        changedService(t.services[0]!, {
          kind: 'service',
          name: 'dns',
          sessionAffinity: 'ClientIP',
          ports: [
            { name: 'dns', port: 53, targetPort: 53, protocol: 'TCP' },
            { name: 'dns-udp', port: 53, targetPort: 53, protocol: 'UDP' },
          ],
        }),
      ],
    };
    const after = new IptablesModel()
      .apply(kubeProxySyncOps(rulesFor(both, proxy('1.29'), 'n1', placements, false), save(t)))
      .save();
    expect(after.match(/^-A KUBE-SERVICES .*--dport 53 -j KUBE-SVC-/gm)).toHaveLength(2);
    expect(after.match(/-m recent --rcheck --seconds 10800 --reap/g)).toHaveLength(2);
    // an unrelated endpoint change keeps the affinity rules (they come from the Service, not from the last step)
    const again = {
      ...both,
      services: [
        {
          ...both.services[0]!,
          endpoints: [...both.services[0]!.endpoints, { pod: 'b', ready: true, terminating: false }],
        },
      ],
    };
    const synced = new IptablesModel()
      .apply(kubeProxySyncOps(rulesFor(again, proxy('1.29'), 'n1', placements, false), after))
      .save();
    expect(synced.match(/-m recent --rcheck --seconds 10800 --reap/g)).toHaveLength(4);
    expect(synced.match(/-m recent --set/g)).toHaveLength(4);
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
    expect(udpConntrackDeletes(layout, svc(['a']), svc([]), placements, [])).toEqual([
      ['conntrack', '-D', '--orig-dst', '10.96.0.10', '--dst-nat', '10.244.1.2', '-p', 'udp'],
    ]);
    expect(udpConntrackDeletes(layout, svc([]), svc(['b']), placements, [])).toEqual([
      ['conntrack', '-D', '--orig-dst', '10.96.0.10', '-p', 'udp'],
    ]);
    expect(udpConntrackDeletes(layout, svc(['a']), svc(['a', 'b']), placements, [])).toEqual([]);
  });

  it('<= 1.31, port by port as v1.20.2: a UDP port the Service gains (with endpoints) or loses clears the VIP', () => {
    const layout = kubeProxyLayout('1.20');
    const withPorts = (ports: { name: string; port: number }[]) =>
      svc(['a']).map((s) => ({
        ...s,
        ports: ports.map((p) => ({ ...p, targetPort: p.port, protocol: 'UDP' as const })),
      }));
    const one = withPorts([{ name: 'dns', port: 53 }]);
    const two = withPorts([
      { name: 'dns', port: 53 },
      { name: 'alt', port: 5353 },
    ]);
    const vip = ['conntrack', '-D', '--orig-dst', '10.96.0.10', '-p', 'udp'];
    // gained: the new port had no endpoints before (detectStaleConnections, per service port)
    expect(udpConntrackDeletes(layout, one, two, placements, [])).toEqual([vip]);
    // lost: its VIP is stale (ServiceMap.unmerge, UDPStaleClusterIP)
    expect(udpConntrackDeletes(layout, two, one, placements, [])).toEqual([vip]);
    // gone with the Service
    expect(udpConntrackDeletes(layout, one, [], placements, [])).toEqual([vip]);
    // the same ports and endpoints: nothing
    expect(udpConntrackDeletes(layout, two, two, placements, [])).toEqual([]);
  });

  it('1.32: the reconciler deletes entries to anything but a serving endpoint, and skips a service left with none (kubernetes#139628)', () => {
    // kubernetes/kubernetes @1601b9e27d8570364d9a1b94be16a0ca7b744a7e pkg/proxy/conntrack/cleanup.go, CleanStaleEntries:
    // serving endpoints only (lines 79-81), a service without them skipped (85-87), filterForIPPortNAT (125-128)
    const layout = kubeProxyLayout('1.32');
    expect(udpConntrackDeletes(layout, svc(['a']), svc([]), placements, flows)).toEqual([]);
    expect(udpConntrackDeletes(layout, svc([]), svc(['b']), placements, flows)).toEqual([
      [
        'conntrack',
        '-D',
        '-p',
        'udp',
        '--orig-dst',
        '10.96.0.10',
        '--orig-port-dst',
        '53',
        '--reply-src',
        '10.244.1.2',
      ],
    ]);
    expect(udpConntrackDeletes(layout, svc(['a']), svc(['a', 'b']), placements, flows)).toEqual([]);
  });

  it('1.32: a terminating endpoint that still serves keeps its entries; one that stopped serving loses them', () => {
    // cleanup.go lines 71-81: "we do not take ... terminating status of the service into account", only IsServing()
    const layout = kubeProxyLayout('1.32');
    const withA = (a: { ready: boolean; terminating: boolean }) =>
      Topology.parse({
        ...topology('UDP', []),
        services: [{ ...topology('UDP', []).services[0]!, endpoints: [{ pod: 'a', ...a }, 'b'] }],
      }).services;
    expect(
      udpConntrackDeletes(layout, svc(['a', 'b']), withA({ ready: true, terminating: true }), placements, flows),
    ).toEqual([]);
    expect(
      udpConntrackDeletes(layout, svc(['a', 'b']), withA({ ready: false, terminating: true }), placements, flows),
    ).toHaveLength(1);
  });

  it('1.32: entries to a NodePort whose reply is not from a serving endpoint are deleted by port and reply source', () => {
    // cleanup.go lines 102-107 (serviceNodePortEndpointIPs) and 130-136 (filterForPortNAT: orig-port-dst + reply-src)
    const nodePort = Topology.parse({
      ...topology('UDP', []),
      services: [
        {
          name: 'dns',
          type: 'NodePort',
          clusterIP: '10.96.0.10',
          ports: [{ name: 'dns', port: 53, targetPort: 53, protocol: 'UDP', nodePort: 30053 }],
          endpoints: ['b'],
        },
      ],
    }).services;
    const toNode = parseUdpFlows(
      'udp      17 28 src=172.18.0.100 dst=172.18.0.2 sport=41000 dport=30053 src=10.244.1.2 dst=172.18.0.2 sport=53 dport=41000 mark=0 use=1\n',
    );
    expect(udpConntrackDeletes(kubeProxyLayout('1.32'), nodePort, nodePort, placements, toNode)).toEqual([
      ['conntrack', '-D', '-p', 'udp', '--orig-port-dst', '30053', '--reply-src', '10.244.1.2'],
    ]);
    // the flow to the serving endpoint stays
    const live = parseUdpFlows(
      'udp      17 28 src=172.18.0.100 dst=172.18.0.2 sport=41000 dport=30053 src=10.244.1.3 dst=172.18.0.2 sport=53 dport=41000 mark=0 use=1\n',
    );
    expect(udpConntrackDeletes(kubeProxyLayout('1.32'), nodePort, nodePort, placements, live)).toEqual([]);
  });

  it('TCP services are never cleaned', () => {
    expect(
      udpConntrackDeletes(
        kubeProxyLayout('1.31'),
        topology('TCP', ['a']).services,
        topology('TCP', []).services,
        placements,
        flows,
      ),
    ).toEqual([]);
  });
});
