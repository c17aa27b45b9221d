// A hostPort bound to one address of its node (a container port's hostIP): what validation accepts and refuses,
// the scheduler's rule for two pods on one port (per address, no hostIP being every address), what the lab hands
// portmap, what a real cluster's pod spec asks for, and what `netrepro render` lists.
import { describe, expect, it } from 'vitest';
import { portMappings } from '../../src/dataplane/port-mappings.ts';
import { renderNode } from '../../src/dataplane/render-node.ts';
import { ScenarioValidationError } from '../../src/model/errors.ts';
import { parseScenario } from '../../src/model/load-scenario.ts';
import { Topology } from '../../src/model/scenario-schema.ts';
import { podObject } from '../../src/providers/real/common/workload-objects.ts';

type HostPortEntry = { hostPort: number; containerPort: number; protocol?: string; hostIP?: string };

/** A one-node scenario (two with `node-b`) whose pods hold these hostPorts. */
function scenario(pods: { name: string; node?: string; hostPorts: HostPortEntry[] }[]): string {
  const flow = (h: HostPortEntry) =>
    `{ ${Object.entries(h)
      .map(([k, v]) => `${k}: ${v}`)
      .join(', ')} }`;
  return [
    'id: hostip',
    'title: hostIP',
    'topology:',
    '  cni: bridge',
    '  nodes:',
    '    - { name: node-a, podCIDR: 10.244.1.0/24 }',
    '    - { name: node-b, podCIDR: 10.244.2.0/24 }',
    '  pods:',
    ...pods.map(
      (p) => `    - { name: ${p.name}, node: ${p.node ?? 'node-a'}, hostPorts: [${p.hostPorts.map(flow).join(', ')}] }`,
    ),
    'probes:',
    '  - { id: local, from: node/node-a, http: { to: localhost, port: 54321 } }',
    'baseline: { expect: { local: ok } }',
    'fault:',
    '  steps: [{ sysctl: { on: node/node-a, name: net.ipv4.conf.all.route_localnet, value: 0 } }]',
    '  expect: { local: timeout }',
    'fixes:',
    '  - steps: [{ sysctl: { on: node/node-a, name: net.ipv4.conf.all.route_localnet, value: 1 } }]',
    '    expect: { local: ok }',
    '',
  ].join('\n');
}

function issuesOf(source: string): string[] {
  try {
    parseScenario(source, 'hostip.yaml');
  } catch (e) {
    if (e instanceof ScenarioValidationError) return e.message.split('\n');
    throw e;
  }
  return [];
}

const port = (hostIP?: string, protocol = 'TCP'): HostPortEntry => ({
  hostPort: 54321,
  containerPort: 80,
  protocol,
  ...(hostIP ? { hostIP } : {}),
});

describe('a hostPort bound to an address of its node', () => {
  it("takes the pod's own node as node/NAME, or 127.0.0.1", () => {
    expect(issuesOf(scenario([{ name: 'pod1', hostPorts: [port('127.0.0.1')] }]))).toEqual([]);
    expect(issuesOf(scenario([{ name: 'pod2', hostPorts: [port('node/node-a')] }]))).toEqual([]);
  });

  it('refuses another node, a literal address and a name that is no reference, saying what to write', () => {
    expect(issuesOf(scenario([{ name: 'pod2', hostPorts: [port('node/node-b')] }]))).toEqual([
      expect.stringMatching(
        /hostPorts\[0\]\.hostIP: node-b is not pod pod2's node \(node-a\).*expected node\/node-a \(its address\) or 127\.0\.0\.1/,
      ),
    ]);
    expect(issuesOf(scenario([{ name: 'pod2', hostPorts: [port('172.18.0.2')] }]))).toEqual([
      expect.stringMatching(/hostPorts\[0\]\.hostIP: not an address of node node-a: .* written node\/node-a/),
    ]);
    expect(issuesOf(scenario([{ name: 'pod2', hostPorts: [port('node-a')] }]))[0]).toMatch(
      /hostIP: node\/NAME \(the pod's node's address\) or 127\.0\.0\.1/,
    );
  });

  it("lets pods share a port on one node by hostIP or protocol (upstream's no-conflict conformance test)", () => {
    const shared = scenario([
      { name: 'pod1', hostPorts: [port('127.0.0.1')] },
      { name: 'pod2', hostPorts: [port('node/node-a')] },
      { name: 'pod3', hostPorts: [port('node/node-a', 'UDP')] },
      { name: 'pod4', node: 'node-b', hostPorts: [port()] },
    ]);
    expect(issuesOf(shared)).toEqual([]);
  });

  it('refuses one address twice, and any address where another pod holds every address (no hostIP)', () => {
    expect(
      issuesOf(
        scenario([
          { name: 'pod1', hostPorts: [port('node/node-a')] },
          { name: 'pod2', hostPorts: [port('node/node-a')] },
        ]),
      ),
    ).toEqual([
      expect.stringMatching(
        /pods\[1\]\.hostPorts\[0\]\.hostPort: pod pod1 already holds 54321\/TCP at hostIP node\/node-a on node node-a/,
      ),
    ]);
    // upstream's "there exists conflict between pods with same hostPort and protocol but one using 0.0.0.0 hostIP"
    expect(
      issuesOf(
        scenario([
          { name: 'pod4', hostPorts: [port()] },
          { name: 'pod5', hostPorts: [port('node/node-a')] },
        ]),
      ),
    ).toEqual([expect.stringMatching(/pod pod4 already holds 54321\/TCP on node node-a \(on every address/)]);
    expect(
      issuesOf(
        scenario([
          { name: 'pod1', hostPorts: [port('127.0.0.1')] },
          { name: 'pod4', hostPorts: [port()] },
        ]),
      ),
    ).toEqual([expect.stringMatching(/pod pod1 already holds 54321\/TCP at hostIP 127\.0\.0\.1 on node node-a/)]);
  });
});

const topology = Topology.parse({
  cni: 'bridge',
  nodes: [
    { name: 'node-a', podCIDR: '10.244.1.0/24' },
    { name: 'node-b', podCIDR: '10.244.2.0/24' },
  ],
  pods: [
    { name: 'pod1', node: 'node-b', hostPorts: [{ hostPort: 54321, containerPort: 80, hostIP: '127.0.0.1' }] },
    {
      name: 'pod2',
      node: 'node-b',
      hostPorts: [
        { hostPort: 54321, containerPort: 80, hostIP: 'node/node-b' },
        { hostPort: 54321, containerPort: 80, protocol: 'UDP' },
      ],
    },
  ],
});
const addresses: Record<string, string> = { 'node/node-b': '192.0.2.7' };
const address = (ref: string) => addresses[ref] ?? `(no address for ${ref})`;

describe("a hostPort's hostIP on its way to the dataplane", () => {
  it("reaches portmap as the runtime hands it over: the node's address, or the loopback itself", () => {
    expect(portMappings(topology.pods[0]!, address)).toEqual([
      { hostPort: 54321, containerPort: 80, protocol: 'tcp', hostIP: '127.0.0.1' },
    ]);
    expect(portMappings(topology.pods[1]!, address)).toEqual([
      { hostPort: 54321, containerPort: 80, protocol: 'tcp', hostIP: '192.0.2.7' },
      { hostPort: 54321, containerPort: 80, protocol: 'udp' },
    ]);
  });

  it("is the container port's hostIP on a real cluster, as the cluster lists the node's address", () => {
    const images = { probeImage: 'p', agentImage: 'a' };
    const input = { pod: topology.pods[1]!, namespace: 'default', nodeName: 'n', dnsRecords: [], address };
    expect(podObject(input, topology, images, 'r').spec!.containers[0]!.ports).toEqual([
      { containerPort: 80, hostPort: 54321, protocol: 'TCP', hostIP: '192.0.2.7' },
      { containerPort: 80, hostPort: 54321, protocol: 'UDP' },
    ]);
    const { address: _, ...withoutAddresses } = input;
    expect(() => podObject(withoutAddresses, topology, images, 'r')).toThrow(/no address for node\/node-b/);
  });

  it('is listed by render with the address the lab gives the node', () => {
    expect(renderNode(topology, 'node-b').split('\n')).toEqual(
      expect.arrayContaining([
        '127.0.0.1:54321/TCP -> pod1 10.244.2.2:80',
        '172.18.0.3:54321/TCP -> pod2 10.244.2.3:80',
        '54321/UDP -> pod2 10.244.2.3:80',
      ]),
    );
  });
});
