// The topology the oracle test (kube-proxy-oracle.test.ts) and scripts/bench-local.ts start, and how a
// node's iptables-save is normalised before it is compared with the lab's render.
import { Topology, type TopologySpec } from '../../src/model/scenario-schema.ts';

/**
 * Every Service kind the render covers; pods placed so NodePort Local has a local endpoint on node-a only, and
 * `sleepy` a not-ready endpoint (its readiness probe never passes) beside a ready one and alone. The two
 * LoadBalancers: one with source ranges, the first holding the nodes' addresses (the "allowFromNode" rule), and one
 * with externalTrafficPolicy Local and a health check, its endpoint on node-a only.
 */
export const ORACLE_TOPOLOGY: TopologySpec = Topology.parse({
  cni: 'bridge',
  kubeProxy: '1.20',
  nodes: [
    { name: 'node-a', podCIDR: '10.244.1.0/24' },
    { name: 'node-b', podCIDR: '10.244.2.0/24' },
  ],
  pods: [
    { name: 'client', node: 'node-a' },
    { name: 'web-a1', node: 'node-a', serve: [{ http: 8080 }] },
    { name: 'web-a2', node: 'node-a', serve: [{ http: 8080 }] },
    { name: 'web-b', node: 'node-b', serve: [{ http: 8080 }] },
    { name: 'dns', node: 'node-b', serve: [{ dns: 53 }] },
    { name: 'plain', node: 'node-b', serve: [{ http: 8080 }] },
    { name: 'sleepy', node: 'node-b', serve: [{ http: 8080 }] },
  ],
  services: [
    {
      name: 'multi',
      clusterIP: '10.96.0.20',
      ports: [{ name: 'http', port: 80, targetPort: 8080 }],
      endpoints: ['web-a1', 'web-a2', 'web-b'],
    },
    {
      name: 'np-cluster',
      type: 'NodePort',
      clusterIP: '10.96.0.21',
      ports: [{ name: 'http', port: 80, targetPort: 8080, nodePort: 30080 }],
      endpoints: ['web-b'],
    },
    {
      name: 'np-local',
      type: 'NodePort',
      externalTrafficPolicy: 'Local',
      clusterIP: '10.96.0.22',
      ports: [{ name: 'http', port: 80, targetPort: 8080, nodePort: 30081 }],
      endpoints: ['web-a1'],
    },
    { name: 'empty', clusterIP: '10.96.0.23', ports: [{ name: 'http', port: 80, targetPort: 8080 }], endpoints: [] },
    {
      name: 'kube-dns',
      namespace: 'kube-system',
      clusterIP: '10.96.0.10',
      ports: [
        { name: 'dns', port: 53, targetPort: 53, protocol: 'UDP' },
        { name: 'dns-tcp', port: 53, targetPort: 53 },
      ],
      endpoints: ['dns'],
    },
    { name: 'unnamed', clusterIP: '10.96.0.24', ports: [{ port: 80, targetPort: 8080 }], endpoints: ['plain'] },
    {
      name: 'half-ready',
      clusterIP: '10.96.0.25',
      ports: [{ name: 'http', port: 80, targetPort: 8080 }],
      endpoints: ['web-b', { pod: 'sleepy', ready: false }],
    },
    {
      name: 'none-ready',
      clusterIP: '10.96.0.26',
      ports: [{ name: 'http', port: 80, targetPort: 8080 }],
      endpoints: [{ pod: 'sleepy', ready: false }],
    },
    {
      name: 'lb-ranges',
      type: 'LoadBalancer',
      clusterIP: '10.96.0.27',
      loadBalancerIP: '203.0.113.10',
      loadBalancerSourceRanges: ['172.18.0.0/24', '198.51.100.0/24'],
      ports: [{ name: 'http', port: 80, targetPort: 8080, nodePort: 30082 }],
      endpoints: ['web-b'],
    },
    {
      name: 'lb-local',
      type: 'LoadBalancer',
      externalTrafficPolicy: 'Local',
      healthCheckNodePort: 32100,
      clusterIP: '10.96.0.28',
      loadBalancerIP: '203.0.113.11',
      ports: [{ name: 'http', port: 80, targetPort: 8080, nodePort: 30083 }],
      endpoints: ['web-a1'],
    },
  ],
});

const CANARY = /KUBE-(PROXY|KUBELET)-CANARY/;
const SORTED_CHAINS = ['KUBE-SERVICES', 'KUBE-NODEPORTS'];

/** iptables-save (filter and nat) as comparable lines: what the docstring above lists is normalised, nothing else. */
export function normalise(save: string): string[] {
  const lines = save.split('\n').filter((l) => l && !l.startsWith('#') && l !== 'COMMIT');
  let table = '';
  const kept: string[] = [];
  const kubernetesChains = new Set<string>();
  for (const l of lines) {
    const m = /^-A (KUBE-(?:SVC|SEP)-\S+) .*"default\/kubernetes:https"/.exec(l);
    if (m) kubernetesChains.add(m[1]!);
    const j = /"default\/kubernetes:https.*-j (KUBE-(?:SVC|SEP)-\S+)/.exec(l);
    if (j) kubernetesChains.add(j[1]!);
  }
  for (const l of lines) {
    if (l.startsWith('*')) {
      table = l.slice(1);
      continue;
    }
    if (table !== 'filter' && table !== 'nat') continue;
    if (CANARY.test(l) || l.includes('"default/kubernetes:https')) continue;
    if ([...kubernetesChains].some((c) => l.startsWith(`:${c} `) || l.startsWith(`-A ${c} `))) continue;
    kept.push(`${table} ${l.replace(/ \[\d+:\d+\]$/, '')}`);
  }
  const order = (l: string) => (SORTED_CHAINS.some((c) => l.includes(` -A ${c} `)) ? 1 : 0);
  // the Service rules of KUBE-SERVICES / KUBE-NODEPORTS compared as a set (a Go map's order), the rest in order
  return [...kept.filter((l) => order(l) === 0), ...kept.filter((l) => order(l) === 1).sort()];
}
