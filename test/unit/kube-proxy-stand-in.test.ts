// When a real cluster's kube-proxy stands for the release a scenario names: the same INVALID DROP layout, or a
// newer release where only the DROP could differ (no Services) and it does not with the node's be_liberal.
import { describe, expect, it } from 'vitest';
import { Topology, type TopologySpec } from '../../src/model/scenario-schema.ts';
import { standInRefusal } from '../../src/providers/real/common/kube-proxy-stand-in.ts';
import { fitKubeProxy } from '../../src/providers/real/common/scenario-fit.ts';

const plain = { beLiberal: false, services: false };

describe('a cluster kube-proxy standing for another release', () => {
  it('stands for a release of the same INVALID DROP layout, Services or not', () => {
    expect(standInRefusal('1.29', 'v1.35.1', { beLiberal: true, services: true })).toBeUndefined();
    expect(standInRefusal('1.15', 'v1.20.2', { beLiberal: true, services: true })).toBeUndefined();
  });

  it('a newer one stands for 1.15-1.28 without Services while be_liberal is 0 when it starts', () => {
    expect(standInRefusal('1.15', 'v1.35.1', plain)).toBeUndefined();
    expect(standInRefusal('1.16', 'v1.35.1+k3s1', plain)).toBeUndefined();
    expect(standInRefusal('1.15', 'v1.35.1', { beLiberal: true, services: false })).toMatch(
      /with nf_conntrack_tcp_be_liberal=1 as it starts, 1\.15 writes the DROP and v1\.35\.1 does not$/,
    );
    expect(standInRefusal('1.15', 'v1.35.1', { beLiberal: false, services: true })).toMatch(
      /and the scenario's Services would be translated as v1\.35\.1 does$/,
    );
  });

  it('never for 1.14 (no DROP, the shared jump deleted at start-up) on a newer cluster, nor for a newer release on an older one', () => {
    expect(standInRefusal('1.14', 'v1.35.1', { beLiberal: true, services: false })).toMatch(
      /1\.14 deletes the shared "kubernetes forwarding rules" jump at start-up, v1\.35\.1 keeps it$/,
    );
    expect(standInRefusal('1.14', 'v1.35.1', plain)).toMatch(/1\.14 leaves the DROP out and v1\.35\.1 writes it$/);
    expect(standInRefusal('1.29', 'v1.20.2', plain)).toMatch(/^kube-proxy 1\.29 and the cluster's v1\.20\.2 write/);
    expect(standInRefusal('1.15', 'v1.13.0', plain)).toMatch(/older than the oldest kube-proxy layout/);
  });
});

describe('fitKubeProxy reads be_liberal at start from the topology', () => {
  const topology = (sysctls?: Record<string, string>, services = false): TopologySpec =>
    Topology.parse({
      cni: 'cilium',
      kubeProxy: '1.15',
      nodes: [{ name: 'node-a', podCIDR: '10.244.1.0/24', ...(sysctls ? { sysctls } : {}) }],
      pods: [{ name: 'web', node: 'node-a', serve: [{ http: 8080 }] }],
      services: services
        ? [{ name: 'web', clusterIP: '10.96.0.20', ports: [{ port: 80, targetPort: 8080 }], endpoints: ['web'] }]
        : [],
    });

  it('fits the FORWARD race topology (1.15, no Services) on v1.35.1, not with be_liberal set at provisioning or with Services', () => {
    expect(fitKubeProxy(topology(), 'v1.35.1')).toBeUndefined();
    expect(fitKubeProxy(topology({ 'net.netfilter.nf_conntrack_tcp_be_liberal': '1' }), 'v1.35.1')?.hint).toBe(
      'set NETREPRO_K8S_VERSION to a 1.15 to 1.28 release the provider can run',
    );
    expect(fitKubeProxy(topology(undefined, true), 'v1.35.1')?.reason).toMatch(/\(1\.15 to 1\.28\)/);
  });
});
