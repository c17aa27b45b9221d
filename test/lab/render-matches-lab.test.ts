// `netrepro render` claims to print what the lab installs. Here the lab is built and each node's
// real `iptables-save` is compared with the render, line for line (counters and date comments
// aside); and the Service shapes the writer knows (session affinity included) are exercised against the kernel.
import { describe, expect, it } from 'vitest';
import { newRunId, runPrefix } from '../../src/contract/run-id.ts';
import { provisionNetnsLab } from '../../src/providers/netns/provision-netns-lab.ts';
import { renderIptables } from '../../src/dataplane/render-node.ts';
import { labSkipReason, labTopology } from '../lab-support.ts';

const topology = (cni: string, kubeProxy: string, services: string, extraNode = '') =>
  labTopology(`
  cni: ${cni}
  kubeProxy: "${kubeProxy}"
  hosts: [{ name: ext }]
  nodes:
    - { name: a, podCIDR: 10.244.1.0/24${extraNode} }
    - { name: b, podCIDR: 10.244.2.0/24 }
  pods:
    - { name: client, node: a }
    - { name: web, node: a, serve: [{ http: 8080 }] }
    - { name: web2, node: b, serve: [{ http: 8080 }] }
  services:
${services}`);

const SERVICES = `
    - { name: web, clusterIP: 10.96.0.20, sessionAffinity: ClientIP, sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } }, ports: [{ name: http, port: 80, targetPort: 8080 }], endpoints: [web, web2] }
    - { name: np, type: NodePort, externalTrafficPolicy: Local, sessionAffinity: ClientIP, clusterIP: 10.96.0.21, ports: [{ port: 80, targetPort: 8080, nodePort: 30080 }], endpoints: [web2, { pod: web, ready: false }] }
    - { name: empty, type: NodePort, clusterIP: 10.96.0.22, ports: [{ port: 80, targetPort: 8080, nodePort: 30081 }], endpoints: [] }`;

const saved = (text: string) =>
  text
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => l.replace(/ \[\d+:\d+\]$/, ' [0:0]'))
    .filter((l, _, all) => !l.startsWith('*') || all.length > 0)
    .join('\n');

const context = (runId: string) => ({
  runId,
  prefix: runPrefix(runId),
  signal: new AbortController().signal,
  log: () => {},
});

describe.skipIf(labSkipReason)('render matches the lab', () => {
  for (const [cni, version] of [
    ['bridge', '1.14'],
    ['bridge', '1.29'],
    ['flannel', '1.22'],
  ] as const) {
    it(`${cni}, kube-proxy ${version}: iptables-save on each node is the render`, async () => {
      const t = topology(cni, version, SERVICES, cni === 'flannel' ? ', forwardPolicy: DROP' : '');
      await using lab = await provisionNetnsLab(t, context(newRunId()));
      for (const node of ['a', 'b']) {
        const real = await lab.node(node).exec(['iptables-save', '-t', 'filter']);
        const realNat = await lab.node(node).exec(['iptables-save', '-t', 'nat']);
        expect(saved(real.stdout + realNat.stdout)).toBe(saved(renderIptables(t, node)));
      }
      // the lab decides its ensured jumps from the rule text in iptables-save (iptables-ops.ts), as
      // \`iptables -C\` would: a restart of every component with its jumps in place changes nothing
      const before = await lab.node('a').exec(['iptables-save', '-t', 'filter']);
      const beforeNat = await lab.node('a').exec(['iptables-save', '-t', 'nat']);
      await lab.perform({ kind: 'start', node: 'a', component: 'kube-proxy' });
      if (cni === 'flannel') await lab.perform({ kind: 'start', node: 'a', component: 'flannel' });
      const after = await lab.node('a').exec(['iptables-save', '-t', 'filter']);
      const afterNat = await lab.node('a').exec(['iptables-save', '-t', 'nat']);
      expect(saved(after.stdout + afterNat.stdout)).toBe(saved(before.stdout + beforeNat.stdout));
      // no endpoints: the host-network client is rejected at once by filter OUTPUT -> KUBE-SERVICES, not left to time out
      const curl = await lab.node('a').exec(['curl', '-sS', '-m', '2', 'http://10.96.0.22/'], { reject: false });
      expect(curl.stderr).toMatch(/Connection refused|Couldn't connect/);
      // the NodePort with Local policy answers on node b (local endpoint web2) and drops on node a (its local pod is not ready)
      const onB = await lab
        .host('ext')
        .exec(['curl', '-sS', '-m', '2', `http://${lab.address('node/b')}:30080/`], { reject: false });
      expect(onB.stdout).toContain('web2');
      // from outside the cluster: a pod client would be short-circuited to the cluster-wide chain, as upstream does
      const onA = await lab
        .host('ext')
        .exec(['curl', '-sS', '-m', '2', `http://${lab.address('node/a')}:30080/`], { reject: false });
      expect(onA.stderr).toMatch(/timed out/);
    });
  }
});
