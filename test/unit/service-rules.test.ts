// Reading a Service's state out of a node's iptables-save, as the real providers' endpoint and service steps
// wait on it: tried on the lab's renders of kube-proxy's layouts (src/dataplane/kube-proxy-rules.ts; its 1.20
// render equals a real v1.20.2 node's rules, docs/local-cluster.md) before and after each kind of change.
import { describe, expect, it } from 'vitest';
import { endpointSlices, serviceObject } from '../../src/contract/kube-objects.ts';
import { kubeProxyLayout } from '../../src/dataplane/kube-proxy-layout.ts';
import { kubeProxyRules, restorePayload } from '../../src/dataplane/kube-proxy-rules.ts';
import { Topology } from '../../src/model/scenario-schema.ts';
import {
  clusterIPEndpoints,
  clusterIPRules,
  mentions,
  nodePortRules,
  parseIptablesSave,
  showsAffinity,
  showsLocalExternalPolicy,
  type NodeRules,
} from '../../src/providers/real/common/service-rules.ts';

const pods = new Map([
  ['a', { ip: '10.244.1.3', node: 'n1' }],
  ['b', { ip: '10.244.2.3', node: 'n2' }],
]);
const HTTP = { name: 'http', port: 80, protocol: 'TCP' as const };
const REF = { namespace: 'nr-abc123-default', name: 'web' };

/** Node `node`'s rules as kube-proxy `version` writes them for Service web (endpoints a on n1, b on n2 unless given). */
function rules(version: string, node: string, extra: Record<string, unknown> = {}, unquoted = false): NodeRules {
  const svc = {
    ...Topology.parse({
      cni: 'bridge',
      nodes: [
        { name: 'n1', podCIDR: '10.244.1.0/24' },
        { name: 'n2', podCIDR: '10.244.2.0/24' },
      ],
      pods: [
        { name: 'a', node: 'n1' },
        { name: 'b', node: 'n2' },
      ],
      services: [
        {
          name: 'web',
          clusterIP: '10.96.100.1',
          ports: [{ name: 'http', port: 80, targetPort: 8080 }],
          endpoints: ['a', 'b'],
          ...extra,
        },
      ],
    }).services[0]!,
    namespace: REF.namespace,
  };
  const saved = restorePayload(
    kubeProxyRules({
      layout: kubeProxyLayout(version),
      services: [serviceObject(svc)],
      slices: endpointSlices(svc, pods),
      masqueradeAll: false,
      clusterCIDR: '10.244.0.0/16',
      nodeName: node,
      beLiberal: false,
      nfacctCounters: false,
    }),
  );
  // iptables-save quotes a comment only when it has a space: both forms must read the same
  return parseIptablesSave(unquoted ? saved.replace(/--comment "([^" ]*)"/g, '--comment $1') : saved);
}

const NODEPORT = { type: 'NodePort', ports: [{ name: 'http', port: 80, targetPort: 8080, nodePort: 30080 }] };

describe.each(['1.15', '1.20', '1.35'])('a Service read from kube-proxy %s rules', (version) => {
  for (const unquoted of [false, true])
    it(`finds the endpoints its ClusterIP leads to, following its chains${unquoted ? ' (unquoted comments)' : ''}`, () => {
      for (const node of ['n1', 'n2']) {
        expect(clusterIPEndpoints(rules(version, node, {}, unquoted), REF, HTTP)).toEqual(
          new Set(['10.244.1.3:8080', '10.244.2.3:8080']),
        );
        expect(clusterIPEndpoints(rules(version, node, { endpoints: ['b'] }, unquoted), REF, HTTP)).toEqual(
          new Set(['10.244.2.3:8080']),
        );
        const none = rules(version, node, { endpoints: [] }, unquoted);
        expect(clusterIPEndpoints(none, REF, HTTP).size).toBe(0);
        // without endpoints the port is still there: its REJECT in the filter table
        expect(clusterIPRules(none, REF, HTTP)).toHaveLength(1);
      }
    });

  it("tells a port by name, protocol and number, and another Service's rules from its own", () => {
    const r = rules(version, 'n1');
    expect(clusterIPRules(r, REF, HTTP).length).toBeGreaterThan(0);
    expect(clusterIPRules(r, REF, { ...HTTP, protocol: 'UDP' })).toEqual([]);
    expect(clusterIPRules(r, REF, { ...HTTP, port: 81 })).toEqual([]);
    expect(clusterIPRules(r, REF, { ...HTTP, name: 'other' })).toEqual([]);
    expect(clusterIPRules(r, { ...REF, name: 'we' }, HTTP)).toEqual([]);
    expect(clusterIPEndpoints(r, { ...REF, namespace: 'default' }, HTTP).size).toBe(0);
  });

  it('shows NodePort, with or without endpoints, and only then', () => {
    expect(nodePortRules(rules(version, 'n1'), REF, HTTP)).toEqual([]);
    for (const endpoints of [['a', 'b'], []]) {
      const r = rules(version, 'n1', { ...NODEPORT, endpoints });
      expect(nodePortRules(r, REF, HTTP, 30080).length).toBeGreaterThan(0);
      expect(nodePortRules(r, REF, HTTP, 30081)).toEqual([]);
    }
  });

  it('shows externalTrafficPolicy Local while the Service has endpoints, on a node with a local one or without', () => {
    for (const node of ['n1', 'n2']) {
      expect(showsLocalExternalPolicy(rules(version, node, NODEPORT), REF)).toBe(false);
      expect(showsLocalExternalPolicy(rules(version, node, { ...NODEPORT, externalTrafficPolicy: 'Local' }), REF)).toBe(
        true,
      );
      expect(
        showsLocalExternalPolicy(
          rules(version, node, { ...NODEPORT, externalTrafficPolicy: 'Local', endpoints: ['a'] }),
          REF,
        ),
      ).toBe(true);
    }
  });

  it('shows ClientIP affinity with its timeout', () => {
    const affinity = (seconds: number) => ({
      sessionAffinity: 'ClientIP',
      sessionAffinityConfig: { clientIP: { timeoutSeconds: seconds } },
    });
    expect(showsAffinity(rules(version, 'n1'), REF, HTTP)).toBe(false);
    expect(showsAffinity(rules(version, 'n1', affinity(60)), REF, HTTP, 60)).toBe(true);
    expect(showsAffinity(rules(version, 'n1', affinity(60)), REF, HTTP, 10800)).toBe(false);
  });
});

describe('a Service read from rules that honour internalTrafficPolicy (1.22 on)', () => {
  it.each(['1.22', '1.35'])('%s: Local leads the ClusterIP to the node’s own endpoints only', (version) => {
    const local = { internalTrafficPolicy: 'Local' };
    expect(clusterIPEndpoints(rules(version, 'n1', local), REF, HTTP)).toEqual(new Set(['10.244.1.3:8080']));
    expect(clusterIPEndpoints(rules(version, 'n2', local), REF, HTTP)).toEqual(new Set(['10.244.2.3:8080']));
    expect(clusterIPEndpoints(rules(version, 'n2', { ...local, endpoints: ['a'] }), REF, HTTP).size).toBe(0);
    expect(clusterIPRules(rules(version, 'n2', { ...local, endpoints: ['a'] }), REF, HTTP)).toHaveLength(1);
  });
});

describe('rule comments', () => {
  it('name a Service, one of its ports, or its unnamed port exactly', () => {
    const rule = (comment: string) => `-A KUBE-SERVICES -m comment --comment ${comment} -j KUBE-SVC-X`;
    expect(mentions(rule('"default/web:http cluster IP"'), { namespace: 'default', name: 'web' })).toBe(true);
    expect(mentions(rule('default/web:http'), { namespace: 'default', name: 'web' }, { name: 'http' })).toBe(true);
    expect(mentions(rule('default/web:http'), { namespace: 'default', name: 'web' }, {})).toBe(false);
    expect(mentions(rule('"default/web cluster IP"'), { namespace: 'default', name: 'web' }, {})).toBe(true);
    expect(mentions(rule('"default/web-2:http cluster IP"'), { namespace: 'default', name: 'web' })).toBe(false);
    expect(mentions(rule('"x.default/web:http"'), { namespace: 'default', name: 'web' })).toBe(false);
  });
});
