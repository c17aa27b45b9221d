// The endpoint and service steps on kind, minikube and k3s: the merge patch each one sends through the API,
// the wait on every node's iptables-save through the provider's node exec (fake CLIs answering with the lab's
// render of kube-proxy's rules, first as before the change, then as after it), and what is refused before
// anything is sent.
import { afterEach, describe, expect, it } from 'vitest';
import type { LabAction } from '../../src/contract/provider.ts';
import type { TopologySpec } from '../../src/model/scenario-schema.ts';
import { K3sProvider } from '../../src/providers/real/containers/k3s/k3s-provider.ts';
import { KindProvider } from '../../src/providers/real/containers/kind/kind-provider.ts';
import { MinikubeProvider } from '../../src/providers/real/containers/minikube/minikube-provider.ts';
import { fakeTools, kubeProxySave, recordingKubeApi, runContext, topology, type Reply } from './fake-env.ts';

type Provider = 'kind' | 'minikube' | 'k3s';
const P = 'nr-abc123-cluster';
/** Per provider: the Kubernetes node names and the argv that reads a node's rules. */
const NODES: Record<Provider, string[]> = {
  kind: [`${P}-control-plane`, `${P}-worker`],
  minikube: [P, `${P}-m02`],
  k3s: ['3f2a9c1b7d4e'],
};
const SAVE: Record<Provider, (i: number) => string[]> = {
  kind: (i) => ['docker', 'exec', '-i', NODES.kind[i]!, 'iptables-save'],
  minikube: (i) => ['minikube', 'ssh', '-p', P, '--node', NODES.minikube[i]!, '--', 'sudo', 'iptables-save'],
  k3s: () => ['docker', 'exec', '-i', P, 'iptables-save'],
};
const K3S_KUBECONFIG = `apiVersion: v1
clusters: [{ cluster: { server: 'https://localhost:32771' }, name: default }]
contexts: [{ context: { cluster: default, user: default }, name: default }]
current-context: default
users: [{ name: default, user: {} }]
kind: Config
`;

let fakes: ReturnType<typeof fakeTools> | undefined;
afterEach(() => fakes?.restore());

/** Node i's rules as kube-proxy `version` writes them for `t`; `once`: answers one read only. */
const rulesOf = (provider: Provider, t: TopologySpec, once = false, version = '1.35') =>
  t.nodes.map((n, i): Reply => {
    const [tool, ...args] = SAVE[provider](i);
    return { tool: tool!, args, stdout: kubeProxySave(t, n.name, { version }), ...(once ? { once } : {}) };
  });

/**
 * A provisioned cluster of `provider` for `t` whose nodes report `kubeletVersion`. Its nodes' reads answer the
 * rules of `t` to provisioning, then `replies` (made with rulesOf, `once`), then the rules of `after` for good.
 */
async function provisioned(
  provider: Provider,
  t: TopologySpec,
  { after = t, replies = [] as Reply[], kubeletVersion = 'v1.35.1', cni = undefined as 'flannel' | undefined } = {},
) {
  const version = /^v(1\.\d+)\./.exec(kubeletVersion)![1];
  fakes = fakeTools([...rulesOf(provider, t, true, version), ...replies, ...rulesOf(provider, after, false, version)]);
  const work = `${fakes.dir}/work`;
  const { api, factory } = recordingKubeApi(
    NODES[provider]
      .slice(0, t.nodes.length)
      .map((name, i) => ({ name, internalIP: `172.18.0.${i + 2}`, podCIDR: `10.244.${i}.0/24`, kubeletVersion })),
  );
  const made = {
    kind: () => new KindProvider({ workDir: work }, { kubeApi: factory }),
    minikube: () => new MinikubeProvider({ workDir: work }, { kubeApi: factory }),
    k3s: () =>
      new K3sProvider(
        { workDir: work, cni },
        {
          kubeApi: factory,
          startK3s: async (input) => ({ name: input.name, kubeconfig: K3S_KUBECONFIG, stop: async () => {} }),
        },
      ),
  }[provider]();
  const cluster = await made.provision(t, runContext());
  const reads = () => fakes!.lines().filter((l) => l.endsWith(' iptables-save'));
  // what provisioning read is not the step's
  const before = reads().length;
  return { cluster, api, stepReads: () => reads().slice(before) };
}

/** `t` with Service web changed. */
const withWeb = (t: TopologySpec, change: Partial<TopologySpec['services'][number]>): TopologySpec => ({
  ...t,
  services: t.services.map((s) => (s.name === 'web' ? { ...s, ...change } : s)),
});
const endpoints = (...pods: string[]) => pods.map((pod) => ({ pod, ready: true, terminating: false }));
const line = (provider: Provider, i: number) => SAVE[provider](i).join(' ');

// each provisioning runs a few hundred fake CLI calls, each a process: 8-25 s alone, over a minute on a loaded
// machine; a hang guard, not a budget
const HANG_GUARD_MS = 240_000;

describe('endpoint steps on real clusters', { timeout: HANG_GUARD_MS }, () => {
  it('kind: labels the pod through the API and waits until each node DNATs to it, reading each node until it does', async () => {
    const t = topology({ cni: 'bridge', nodes: 2 });
    const after = withWeb(t, { endpoints: endpoints('web', 'client') });
    // node 0 still shows the old endpoints on its first two reads, node 1 on its first
    const [cp, worker] = rulesOf('kind', t, true);
    const { cluster, api, stepReads } = await provisioned('kind', t, { after, replies: [cp!, cp!, worker!] });
    await cluster.perform({ kind: 'endpoint', service: 'web', pod: 'client', op: 'add' });
    expect(api.patches).toEqual([
      {
        kind: 'Pod',
        namespace: 'nr-abc123-default',
        name: 'client',
        patch: { metadata: { labels: { 'netrepro.io/backs-web': 'true' } } },
      },
    ]);
    expect(stepReads()).toEqual([line('kind', 0), line('kind', 1), line('kind', 0), line('kind', 1), line('kind', 0)]);
    await cluster.destroy();
  });

  it('minikube: removes the label and waits until no node DNATs to the pod (its port REJECTed instead)', async () => {
    const t = topology({ cni: 'flannel', nodes: 2 });
    // the step's first read of each node still has the endpoint
    const { cluster, api, stepReads } = await provisioned('minikube', t, {
      after: withWeb(t, { endpoints: [] }),
      replies: rulesOf('minikube', t, true),
    });
    await cluster.perform({ kind: 'endpoint', service: 'web', pod: 'web', op: 'remove' });
    expect(api.patches).toEqual([
      {
        kind: 'Pod',
        namespace: 'nr-abc123-default',
        name: 'web',
        patch: { metadata: { labels: { 'netrepro.io/backs-web': null } } },
      },
    ]);
    expect(stepReads()).toEqual([line('minikube', 0), line('minikube', 1), line('minikube', 0), line('minikube', 1)]);
    await cluster.destroy();
  });

  it('kind: deletes a pod through the API, then waits until no node DNATs to it; the pod cannot be reached after', async () => {
    const t = topology({ cni: 'bridge', nodes: 2 });
    const { cluster, api, stepReads } = await provisioned('kind', t, {
      after: withWeb(t, { endpoints: [] }),
      replies: rulesOf('kind', t, true),
    });
    await cluster.perform({ kind: 'delete', pod: 'web' });
    // the EndpointSlice controller takes it out: no label patch is sent
    expect(api.patches).toEqual([]);
    expect(api.deleted).toEqual(['pod nr-abc123-default/web']);
    expect(stepReads()).toEqual([line('kind', 0), line('kind', 1), line('kind', 0), line('kind', 1)]);
    expect(() => cluster.pod('web')).toThrow(/no pod web/);
    await cluster.destroy();
  });

  it('refuses readiness and termination by hand, sending nothing', async () => {
    const { cluster, api, stepReads } = await provisioned('kind', topology({ cni: 'bridge', nodes: 2 }));
    for (const action of [
      { kind: 'endpoint', service: 'web', pod: 'web', op: 'set', terminating: true },
      { kind: 'endpoint', service: 'web', pod: 'client', op: 'add', ready: false },
    ] as LabAction[])
      await expect(cluster.perform(action)).rejects.toMatchObject({
        code: 'UNSUPPORTED',
        message: expect.stringMatching(/kind changes endpoints by the pod's label only/),
      });
    expect(api.patches).toEqual([]);
    expect(stepReads()).toEqual([]);
    await cluster.destroy();
  });
});

describe('service steps on real clusters', { timeout: HANG_GUARD_MS }, () => {
  it('minikube: patches type, nodePorts and affinity in one merge patch, and waits for all of them', async () => {
    const t = topology({ cni: 'bridge', nodes: 1 });
    const nodePort = withWeb(t, {
      type: 'NodePort',
      ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP', nodePort: 30080 }],
    });
    const after = withWeb(nodePort, {
      sessionAffinity: 'ClientIP',
      sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } },
    });
    // first the old rules, then the NodePort without the affinity yet
    const { cluster, api, stepReads } = await provisioned('minikube', t, {
      after,
      replies: [...rulesOf('minikube', t, true), ...rulesOf('minikube', nodePort, true)],
    });
    await cluster.perform({
      kind: 'service',
      name: 'web',
      type: 'NodePort',
      nodePorts: [30080],
      sessionAffinity: 'ClientIP',
      sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } },
    });
    expect(api.patches).toEqual([
      {
        kind: 'Service',
        namespace: 'nr-abc123-default',
        name: 'web',
        patch: {
          spec: {
            type: 'NodePort',
            ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP', nodePort: 30080 }],
            sessionAffinity: 'ClientIP',
            sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } },
          },
        },
      },
    ]);
    expect(stepReads()).toEqual([line('minikube', 0), line('minikube', 0), line('minikube', 0)]);
    await cluster.destroy();
  });

  it.each(['v1.20.2', 'v1.35.1'])(
    'minikube on %s: waits for externalTrafficPolicy Local in the external chain of its release',
    async (kubeletVersion) => {
      const t = withWeb(topology({ cni: 'bridge', nodes: 1 }), {
        type: 'NodePort',
        ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP', nodePort: 30080 }],
      });
      const version = kubeletVersion.slice(1, 5);
      const { cluster, api, stepReads } = await provisioned('minikube', t, {
        after: withWeb(t, { externalTrafficPolicy: 'Local' }),
        replies: rulesOf('minikube', t, true, version),
        kubeletVersion,
      });
      await cluster.perform({ kind: 'service', name: 'web', externalTrafficPolicy: 'Local' });
      expect(api.patches.map((p) => p.patch)).toEqual([{ spec: { externalTrafficPolicy: 'Local' } }]);
      expect(stepReads()).toEqual([line('minikube', 0), line('minikube', 0)]);
      await cluster.destroy();
    },
  );

  it('k3s: replaces the port list whole and waits until the new port is written and the old one gone', async () => {
    const t = topology({ cni: 'bridge', nodes: 1 });
    const ports = [
      { name: 'tcp', port: 80, targetPort: 8080, protocol: 'TCP' as const },
      { name: 'udp', port: 80, targetPort: 8080, protocol: 'UDP' as const },
    ];
    const { cluster, api, stepReads } = await provisioned('k3s', t, {
      after: withWeb(t, { ports }),
      replies: rulesOf('k3s', t, true),
      cni: 'flannel',
    });
    await cluster.perform({ kind: 'service', name: 'web', ports, sessionAffinity: 'None' });
    expect(api.patches.map((p) => p.patch)).toEqual([
      {
        spec: {
          ports: [
            { name: 'tcp', port: 80, targetPort: 8080, protocol: 'TCP' },
            { name: 'udp', port: 80, targetPort: 8080, protocol: 'UDP' },
          ],
          sessionAffinity: 'None',
          sessionAffinityConfig: null,
        },
      },
    ]);
    expect(stepReads()).toEqual([line('k3s', 0), line('k3s', 0)]);
    await cluster.destroy();
  });

  it('kind: internalTrafficPolicy Local from 1.22 on, waiting until each node leads the ClusterIP to its own endpoints only', async () => {
    const t = topology({ cni: 'bridge', nodes: 2 });
    const { cluster, api, stepReads } = await provisioned('kind', t, {
      after: withWeb(t, { internalTrafficPolicy: 'Local' }),
      replies: rulesOf('kind', t, true),
    });
    await cluster.perform({ kind: 'service', name: 'web', internalTrafficPolicy: 'Local' });
    expect(api.patches.map((p) => p.patch)).toEqual([{ spec: { internalTrafficPolicy: 'Local' } }]);
    // node 0 has no endpoint of web: it kept leading to web's until kube-proxy synced
    expect(stepReads()).toEqual([line('kind', 0), line('kind', 1), line('kind', 0)]);
    await cluster.destroy();
  });

  it('refuses internalTrafficPolicy where the release ignores it, and any field it does not send', async () => {
    const { cluster, api, stepReads } = await provisioned('kind', topology({ cni: 'bridge', nodes: 2 }), {
      kubeletVersion: 'v1.21.14',
    });
    await expect(
      cluster.perform({ kind: 'service', name: 'web', internalTrafficPolicy: 'Local' }),
    ).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      message: 'internalTrafficPolicy is honoured from Kubernetes v1.22 on; this cluster runs v1.21.14',
    });
    await expect(
      cluster.perform({ kind: 'service', name: 'web', type: 'NodePort', loadBalancerIP: '172.18.0.50' } as LabAction),
    ).rejects.toMatchObject({ code: 'UNSUPPORTED', message: "kind cannot change a Service's loadBalancerIP" });
    expect(api.patches).toEqual([]);
    expect(stepReads()).toEqual([]);
    await cluster.destroy();
  });
});

describe('where kube-proxy does not translate Services', { timeout: HANG_GUARD_MS }, () => {
  it('kind with Cilium replacing kube-proxy: no rules to wait for at start, and both steps refused with the reason', async () => {
    const t = topology({ cni: 'cilium', nodes: 2, startOrder: ['cilium'] });
    const { cluster, api, stepReads } = await provisioned('kind', t);
    expect(fakes!.lines().filter((l) => l.endsWith(' iptables-save'))).toEqual([]);
    for (const action of [
      { kind: 'endpoint', service: 'web', pod: 'client', op: 'add' },
      { kind: 'service', name: 'web', type: 'NodePort' },
    ] as LabAction[])
      await expect(cluster.perform(action)).rejects.toMatchObject({
        code: 'UNSUPPORTED',
        message: expect.stringMatching(
          /^kind cannot wait for a change of service web: Cilium replaces kube-proxy on this cluster/,
        ),
        hint: 'run it with --provider netns, or with kube-proxy in startOrder and cilium.socketLB off',
      });
    expect(api.patches).toEqual([]);
    expect(stepReads()).toEqual([]);
    await cluster.destroy();
  });

  it("k3s with Cilium's socket LB beside kube-proxy: waits for kube-proxy at start, refuses the steps", async () => {
    const t = topology({ cni: 'cilium', nodes: 1, cilium: { socketLB: true } });
    const { cluster, api } = await provisioned('k3s', t);
    expect(fakes!.lines().filter((l) => l.endsWith(' iptables-save'))).toEqual([line('k3s', 0)]);
    await expect(cluster.perform({ kind: 'endpoint', service: 'web', pod: 'client', op: 'add' })).rejects.toMatchObject(
      {
        code: 'UNSUPPORTED',
        message: expect.stringMatching(/Cilium's socket LB translates Services inside the pods/),
      },
    );
    expect(api.patches).toEqual([]);
    await cluster.destroy();
  });
});
