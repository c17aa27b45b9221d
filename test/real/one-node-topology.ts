// The smallest cluster a real provider starts for its own sake: one node, one serving pod and its Service. Held
// by test/real/fixtures/hold-cluster.ts (the crash netrepro clean reaps) and timed by scripts/bench-kind.ts.
import { Topology, type TopologySpec } from '../../src/model/scenario-schema.ts';

export const ONE_NODE_TOPOLOGY: TopologySpec = Topology.parse({
  cni: 'bridge',
  kubeProxy: '1.20',
  nodes: [{ name: 'node-a', podCIDR: '10.244.1.0/24' }],
  pods: [{ name: 'web', node: 'node-a', serve: [{ http: 8080 }] }],
  services: [
    { name: 'web', clusterIP: '10.96.0.20', ports: [{ name: 'http', port: 80, targetPort: 8080 }], endpoints: ['web'] },
  ],
});
