// What `netrepro render` prints of a node besides its iptables rules: its default route (via the fabric
// unless the scenario says otherwise) and its CNI chain with the hostPorts portmap will write.
import { describe, expect, it } from 'vitest';
import { renderNode } from '../../src/dataplane/render-node.ts';
import { Topology } from '../../src/model/scenario-schema.ts';

const topology = (node: Record<string, unknown>) =>
  Topology.parse({
    cni: 'bridge',
    hosts: [{ name: 'gw' }],
    nodes: [{ name: 'a', podCIDR: '10.244.1.0/24', ...node }],
    pods: [{ name: 'web', node: 'a', hostPorts: [{ hostPort: 9000, containerPort: 8080 }] }],
  });

const lines = (node: Record<string, unknown>) => renderNode(topology(node), 'a').split('\n');

describe('render of a node', () => {
  it('prints the default route the lab adds: via the fabric, via a host, or none', () => {
    expect(lines({})).toContain('route add default via 172.18.0.1 dev eth0');
    expect(lines({ defaultRoute: 'host/gw' })).toContain('route add default via 172.18.0.100 dev eth0');
    expect(lines({ defaultRoute: 'none' }).some((l) => l.startsWith('route add default'))).toBe(false);
  });

  it("prints the node's CNI chain and the hostPorts its portmap writes (or not, without portmap)", () => {
    expect(lines({})).toEqual(
      expect.arrayContaining([
        '# CNI chain: bridge, portmap',
        '# hostPorts (portmap, CNI-HOSTPORT-DNAT)',
        '9000/TCP -> web 10.244.1.2:8080',
      ]),
    );
    expect(lines({ cniChain: ['bridge'] })).toEqual(
      expect.arrayContaining(['# CNI chain: bridge', '# hostPorts not written (no portmap in the chain)']),
    );
  });
});
