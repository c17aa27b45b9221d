// kind provider contract: the exact commands per CNI shape, the objects it creates, rollback, clean.
import type { V1Pod } from '@kubernetes/client-node';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cleanKindLeftovers } from '../../src/providers/real/containers/kind/clean-kind-leftovers.ts';
import { kindConfig } from '../../src/providers/real/containers/kind/kind-config.ts';
import { KindProvider } from '../../src/providers/real/containers/kind/kind-provider.ts';
import { PINNED, resolveRealOptions } from '../../src/providers/real/common/real-options.ts';
import { waitPodCidrs } from '../../src/providers/real/containers/bridge-cni.ts';
import type { TopologySpec } from '../../src/model/scenario-schema.ts';
import {
  fakeTools,
  kubeProxySave,
  recordingKubeApi,
  runContext,
  topology,
  type Recorded,
  type RecordingApi,
  type Reply,
} from './fake-env.ts';

const CP = 'nr-abc123-cluster-control-plane';
const W1 = 'nr-abc123-cluster-worker';
const NODES = [
  { name: CP, internalIP: '172.18.0.2', podCIDR: '10.244.0.0/24' },
  { name: W1, internalIP: '172.18.0.3', podCIDR: '10.244.1.0/24' },
];
const KC = '--kubeconfig WORK/abc123/kubeconfig --context kind-nr-abc123-cluster';
const ARCH = process.arch === 'arm64' ? 'arm64' : 'amd64';
const PLUGINS = `https://github.com/containernetworking/plugins/releases/download/v1.6.2/cni-plugins-linux-${ARCH}-v1.6.2.tgz`;
const PLUGINS_SHA256: string = PINNED.cniPluginsSha256[ARCH];
const HAS_PLUGINS =
  'test -x /opt/cni/bin/bridge -a -x /opt/cni/bin/host-local -a -x /opt/cni/bin/loopback -a -x /opt/cni/bin/portmap';
// the fake node has every plugin (its `test` exits 0): nothing is fetched
const plugins = (node: string) => [
  `docker exec -i ${node} mkdir -p /opt/cni/bin /etc/cni/net.d`,
  `docker exec -i ${node} ${HAS_PLUGINS}`,
];
/** A node without the plugins: the tarball fetched, its sha256 read in the node, then unpacked. */
const fetched = (node: string, url = PLUGINS) => [
  `docker exec -i ${node} mkdir -p /opt/cni/bin /etc/cni/net.d`,
  `docker exec -i ${node} ${HAS_PLUGINS}`,
  `docker exec -i ${node} curl -fsSL --retry 3 -o /tmp/netrepro-cni-plugins.tgz ${url}`,
  `docker exec -i ${node} sha256sum /tmp/netrepro-cni-plugins.tgz`,
  `docker exec -i ${node} tar -C /opt/cni/bin -xzf /tmp/netrepro-cni-plugins.tgz ./bridge ./host-local ./loopback ./portmap`,
];
const noPlugins = (node: string, sum = PLUGINS_SHA256): Reply[] => [
  { tool: 'docker', args: ['exec', '-i', node, 'test'], exitCode: 1 },
  { tool: 'docker', args: ['exec', '-i', node, 'sha256sum'], stdout: `${sum}  /tmp/netrepro-cni-plugins.tgz\n` },
];
const CREATE =
  'kind create cluster --name nr-abc123-cluster --config WORK/abc123/kind-config.yaml --kubeconfig WORK/abc123/kubeconfig';
const READY = `kubectl ${KC} wait --for=condition=Ready nodes --all --timeout=300s`;
// the fake kubectl lists no Deployment, so none is waited for (the real kind run waits for CoreDNS's rollout)
const SYSTEM = `kubectl ${KC} -n kube-system get deployments -o name`;
const DELETE = 'kind delete cluster --name nr-abc123-cluster --kubeconfig WORK/abc123/kubeconfig';
// provisioning ends when each node's kube-proxy holds every endpoint
const SYNCED = [`docker exec -i ${CP} iptables-save`, `docker exec -i ${W1} iptables-save`];

const EXPECTED: Record<string, string[]> = {
  bridge: [
    CREATE,
    ...plugins(CP),
    ...plugins(W1),
    `docker exec -i ${CP} tee /etc/cni/net.d/10-netrepro-bridge.conflist`,
    `docker exec -i ${CP} ip route replace 10.244.1.0/24 via 172.18.0.3`,
    `docker exec -i ${W1} tee /etc/cni/net.d/10-netrepro-bridge.conflist`,
    `docker exec -i ${W1} ip route replace 10.244.0.0/24 via 172.18.0.2`,
    READY,
    SYSTEM,
    ...SYNCED,
    DELETE,
  ],
  flannel: [
    CREATE,
    ...plugins(CP),
    ...plugins(W1),
    `kubectl ${KC} apply -f https://github.com/flannel-io/flannel/releases/download/v0.26.4/kube-flannel.yml`,
    `kubectl ${KC} -n kube-flannel rollout status daemonset/kube-flannel-ds --timeout=300s`,
    READY,
    SYSTEM,
    ...SYNCED,
    DELETE,
  ],
  cilium: [
    CREATE,
    'helm install cilium cilium --repo https://helm.cilium.io --version 1.20.0 --namespace kube-system --set ipam.mode=kubernetes --set image.pullPolicy=IfNotPresent ' +
      '--set operator.replicas=1 --set kubeProxyReplacement=true --set bpf.masquerade=true --set socketLB.enabled=true --set routingMode=native --set autoDirectNodeRoutes=true --set ipv4NativeRoutingCIDR=10.244.0.0/16 --set k8sServiceHost=nr-abc123-cluster-control-plane --set k8sServicePort=6443 ' +
      `--wait --timeout 10m --kubeconfig WORK/abc123/kubeconfig --kube-context kind-nr-abc123-cluster`,
    `kubectl ${KC} -n kube-system rollout status daemonset/cilium --timeout=300s`,
    READY,
    SYSTEM,
    DELETE,
  ],
};

let fakes: ReturnType<typeof fakeTools> | undefined;
afterEach(() => fakes?.restore());

/** Each node's rules once its kube-proxy holds the topology's endpoints. */
const synced = (t: TopologySpec): Reply[] =>
  t.nodes.map((n, i) => ({
    tool: 'docker',
    args: ['exec', '-i', [CP, W1][i]!, 'iptables-save'],
    stdout: kubeProxySave(t, n.name),
  }));

function setup(replies: Reply[] = [], t?: TopologySpec, env: NodeJS.ProcessEnv = {}) {
  fakes = fakeTools([...replies, ...(t ? synced(t) : [])]);
  const work = `${fakes.dir}/work`;
  const { api, factory } = recordingKubeApi(NODES);
  // the fakes stand for the host's Docker (a kind build on this machine would pick its own engine)
  const options = resolveRealOptions({ workDir: work }, { NETREPRO_KIND_ENGINE: 'host', ...env });
  const provider = new KindProvider(options, { kubeApi: factory });
  const lines = () => fakes!.lines().map((l) => l.replaceAll(work, 'WORK'));
  return { api, provider, lines, fakes };
}

describe('kind provider', () => {
  for (const cni of ['bridge', 'flannel', 'cilium']) {
    it(`provisions and destroys the ${cni} shape with exactly these commands`, async () => {
      const t = topology({ cni, nodes: 2, cilium: { bpfMasquerade: true, socketLB: true }, startOrder: ['cilium'] });
      const { provider, lines } = setup([], t);
      const cluster = await provider.provision(t, runContext());
      await cluster.destroy();
      expect(lines()).toEqual(EXPECTED[cni]);
    });
  }

  it('keeps kube-proxy when the scenario starts it, and maps the cilium options to helm values', async () => {
    const t = topology({ cni: 'cilium', nodes: 1 });
    const { provider, lines } = setup([], t);
    await (await provider.provision(t, runContext())).destroy();
    // the agent reaches the API server directly, so it comes up on a rebooted node before kube-proxy
    expect(lines()[1]).toContain(
      '--set kubeProxyReplacement=false --set bpf.masquerade=true --set socketLB.enabled=false --set routingMode=native --set autoDirectNodeRoutes=true --set ipv4NativeRoutingCIDR=10.244.0.0/16 --set nodePort.enabled=true --set bpf.hostLegacyRouting=true --set k8sServiceHost=nr-abc123-cluster-control-plane --set k8sServicePort=6443 --wait',
    );
    expect(fakes!.calls()[0]!.config).toContain('kubeProxyMode: iptables');
  });

  it('generates the kind config from the topology', () => {
    expect(
      kindConfig({
        name: 'nr-abc123-cluster',
        nodeCount: 2,
        image: 'kindest/node:v1.35.1',
        podSubnet: '10.244.0.0/16',
        kubeProxyMode: 'none',
      }),
    ).toBe(
      [
        'kind: Cluster',
        'apiVersion: kind.x-k8s.io/v1alpha4',
        'name: nr-abc123-cluster',
        'networking:',
        '  disableDefaultCNI: true',
        '  podSubnet: 10.244.0.0/16',
        '  serviceSubnet: 10.96.0.0/16',
        '  kubeProxyMode: none',
        'nodes:',
        '  - role: control-plane',
        '    image: kindest/node:v1.35.1',
        '  - role: worker',
        '    image: kindest/node:v1.35.1',
        '',
      ].join('\n'),
    );
  });

  it('deletes a half-created cluster and re-throws when kind create fails', async () => {
    const { provider, lines } = setup([
      { tool: 'kind', args: ['create'], exitCode: 1, stderr: 'ERROR: failed to create cluster' },
    ]);
    await expect(provider.provision(topology({ cni: 'bridge', nodes: 1 }), runContext())).rejects.toThrow(
      /kind create cluster .*\n.*failed to create cluster/,
    );
    expect(lines()).toEqual([CREATE, DELETE]);
  });

  it('clean deletes only clusters with the run prefix, then the host containers of those runs', async () => {
    setup([
      {
        tool: 'kind',
        args: ['get', 'clusters'],
        stdout: 'kind\nnr-abc123-cluster\nmy-nr-abc123-x\nnr-def456-cluster\n',
      },
      {
        tool: 'docker',
        args: ['ps'],
        stdout: 'c1\tnr-abc123-host-docs\tabc123\nc2\tnr-def456-host-docs\tdef456\nc3\tsomeone-else\tnot-ours\n',
      },
    ]);
    const removed = await cleanKindLeftovers(async (runId) => runId !== 'def456', `${fakes!.dir}/work`);
    expect(removed).toEqual(['kind cluster nr-abc123-cluster', 'container nr-abc123-host-docs']);
    expect(fakes!.lines()).toEqual([
      'kind get clusters',
      'kind delete cluster --name nr-abc123-cluster',
      'docker ps -a --filter label=netrepro.io/run --format {{.ID}}\t{{.Names}}\t{{.Label "netrepro.io/run"}}',
      'docker rm -f c1',
    ]);
  });

  it('fetches the plugins into a node without them, checks the sha256 in the node, and names the URL on the run log', async () => {
    const t = topology({ cni: 'bridge', nodes: 2 });
    const { provider, lines } = setup(noPlugins(W1), t);
    const run = runContext();
    await (await provider.provision(t, run)).destroy();
    expect(lines().slice(1, 8)).toEqual([...plugins(CP), ...fetched(W1)]);
    expect(run.lines).toContain(
      `node/${CP}: CNI plugins bridge, host-local, loopback, portmap already in /opt/cni/bin; nothing fetched`,
    );
    expect(run.lines).toContain(`node/${W1}: fetching CNI plugins from ${PLUGINS}`);
  });

  it('fetches from NETREPRO_CNI_PLUGINS_URL with NETREPRO_CNI_PLUGINS_SHA256 (flannel installs the plugins too)', async () => {
    const t = topology({ cni: 'flannel', nodes: 2 });
    const sum = 'ab'.repeat(32);
    const url = 'file:///srv/cni-plugins.tgz';
    const env = { NETREPRO_CNI_PLUGINS_URL: url, NETREPRO_CNI_PLUGINS_SHA256: sum };
    const { provider, lines } = setup([...noPlugins(CP, sum), ...noPlugins(W1, sum)], t, env);
    await (await provider.provision(t, runContext())).destroy();
    expect(lines().slice(1, 11)).toEqual([...fetched(CP, url), ...fetched(W1, url)]);
  });

  it('refuses a tarball whose sha256 differs, before unpacking it, and deletes the cluster', async () => {
    const t = topology({ cni: 'bridge', nodes: 1 });
    const { provider, lines } = setup(noPlugins(CP, '00'.repeat(32)), t);
    await expect(provider.provision(t, runContext())).rejects.toThrow(
      `the CNI plugins tarball from ${PLUGINS} has sha256 ${'00'.repeat(32)}, expected ${PLUGINS_SHA256}`,
    );
    expect(lines()).toEqual([CREATE, ...fetched(CP).slice(0, -1), DELETE]);
  });

  it('refuses a plugins URL or version of its own without a checksum, and a checksum that is not one', () => {
    expect(() => resolveRealOptions({}, { NETREPRO_CNI_PLUGINS_URL: 'file:///srv/p.tgz' })).toThrow(
      /no checksum for the CNI plugins tarball file:\/\/\/srv\/p\.tgz/,
    );
    expect(() => resolveRealOptions({ cniPluginsVersion: 'v1.7.1' }, {})).toThrow(/no checksum/);
    expect(() =>
      resolveRealOptions({}, { NETREPRO_CNI_PLUGINS_URL: 'file:///srv/p.tgz', NETREPRO_CNI_PLUGINS_SHA256: 'abc' }),
    ).toThrow(/is not a sha256/);
    expect(resolveRealOptions({}, {}).cniPlugins).toEqual({ url: PLUGINS, sha256: PLUGINS_SHA256 });
  });

  it("configures the bridge once kube-controller-manager allocated every node's podCIDR, polling the API until then", async () => {
    const t = topology({ cni: 'bridge', nodes: 2 });
    const { api, lines } = setup([], t);
    let listed = 0;
    // right after kind create: the worker has no podCIDR yet, for two reads
    api.listNodes = async () => (++listed <= 2 ? [NODES[0]!, { ...NODES[1]!, podCIDR: undefined }] : NODES);
    const kind = new KindProvider(
      resolveRealOptions({ workDir: `${fakes!.dir}/work` }, { NETREPRO_KIND_ENGINE: 'host' }),
      {
        kubeApi: () => api,
        podCidrWait: { intervalMs: 5 },
      },
    );
    await (await kind.provision(t, runContext())).destroy();
    expect(listed).toBeGreaterThanOrEqual(3);
    expect(lines()).toContain(`docker exec -i ${CP} ip route replace 10.244.1.0/24 via 172.18.0.3`);
  });

  it('{ns/NAME} resolves to the namespace the run created, with its prefix', async () => {
    const t = topology({ cni: 'bridge', nodes: 1 });
    const { api, provider } = setup([], t);
    const cluster = await provider.provision(t, runContext());
    expect(['default', 'kube-system'].map((ns) => cluster.namespace(ns))).toEqual(
      api.namespaces.map((n) => n.metadata!.name),
    );
    await cluster.destroy();
  });

  it('hands kind the generated config', async () => {
    const t = topology({ cni: 'flannel', nodes: 2 });
    const { provider, fakes: f } = setup([], t);
    await (await provider.provision(t, runContext())).destroy();
    expect(f.calls()[0]!.config).toBe(
      kindConfig({
        name: 'nr-abc123-cluster',
        nodeCount: 2,
        image: 'kindest/node:v1.35.1',
        podSubnet: '10.244.0.0/16',
        kubeProxyMode: 'iptables',
      }),
    );
  });
});

describe('waitPodCidrs', () => {
  const signal = new AbortController().signal;

  it('names the nodes without a podCIDR when the time is up', async () => {
    const api = { listNodes: async () => [NODES[0]!, { ...NODES[1]!, podCIDR: undefined }] };
    await expect(waitPodCidrs(api, signal, { timeoutMs: 30, intervalMs: 5 })).rejects.toThrow(
      `node ${W1} got no spec.podCIDR within 0.03 s`,
    );
  });

  it('stops at once when the run is aborted', async () => {
    const abort = new AbortController();
    let listed = 0;
    const api = {
      listNodes: async () => {
        if (++listed === 2) abort.abort();
        return [{ ...NODES[0]!, podCIDR: undefined }];
      },
    };
    const started = Date.now();
    await expect(waitPodCidrs(api, abort.signal, { timeoutMs: 60_000, intervalMs: 10 })).rejects.toMatchObject({
      code: 'ABORTED',
    });
    expect(listed).toBe(2);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('a two-node bridge cluster, provisioned once for these tests', () => {
  // provisioned, used (a probe command and the agent from a pod, tools on each node), destroyed; each
  // test reads its part of what was recorded
  let recorded: {
    api: RecordingApi;
    calls: Recorded[];
    linesBeforeDestroy: string[];
    addresses: Record<string, string>;
    execsFromPods: RecordingApi['execs'];
  };
  beforeAll(async () => {
    const t = topology({ cni: 'bridge', nodes: 2 });
    const { provider, api, lines, fakes: f } = setup([], t);
    try {
      const cluster = await provider.provision(t, runContext());
      const addresses = Object.fromEntries(
        ['svc/kube-dns', 'node/node-b'].map((ref) => [ref, cluster.address(ref)] as const),
      );
      await cluster.pod('client').exec(['curl', '-sS', 'http://10.96.100.1/']);
      await cluster.pod('client').exec([...cluster.agentCommand, 'dns-query', '--server=10.96.100.2']);
      const execsFromPods = [...api.execs];
      await cluster.node('node-a').exec(['sysctl', '-w', 'net.bridge.bridge-nf-call-iptables=0']);
      await cluster.node('node-b').exec(['conntrack', '-L']);
      const linesBeforeDestroy = lines();
      await cluster.destroy();
      recorded = { api, calls: f.calls(), linesBeforeDestroy, addresses, execsFromPods };
    } finally {
      f.restore();
    }
  });

  it('writes each node a bridge conflist for its own podCIDR, without masquerade', () => {
    const confs = recorded.calls.filter((c) => c.argv.includes('tee')).map((c) => JSON.parse(c.stdin!));
    expect(confs.map((c) => c.plugins[0].ipam.ranges[0][0].subnet)).toEqual(['10.244.0.0/24', '10.244.1.0/24']);
    expect(confs[0].plugins[0]).toMatchObject({ type: 'bridge', bridge: 'cni0', isGateway: true, ipMasq: false });
  });

  it('creates prefixed namespaces, Services without fixed ClusterIPs, and pods pinned to the mapped nodes', () => {
    const { api } = recorded;
    expect(api.namespaces.map((n) => n.metadata!.name)).toEqual(['nr-abc123-default', 'nr-abc123-kube-system']);
    expect(api.configMaps.map((c) => [c.metadata!.namespace, Object.keys(c.data!)])).toEqual([
      ['nr-abc123-default', ['pod-agent.mjs']],
      ['nr-abc123-kube-system', ['pod-agent.mjs']],
    ]);
    expect(api.services).toEqual([
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: {
          name: 'web',
          namespace: 'nr-abc123-default',
          labels: { 'app.kubernetes.io/managed-by': 'netrepro', 'netrepro.io/run': 'abc123' },
        },
        spec: {
          type: 'ClusterIP',
          selector: { 'netrepro.io/backs-web': 'true' },
          ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
        },
      },
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: {
          name: 'kube-dns',
          namespace: 'nr-abc123-kube-system',
          labels: { 'app.kubernetes.io/managed-by': 'netrepro', 'netrepro.io/run': 'abc123' },
        },
        spec: {
          type: 'ClusterIP',
          selector: { 'netrepro.io/backs-kube-dns': 'true' },
          ports: [{ name: 'dns', port: 53, targetPort: 53, protocol: 'UDP' }],
        },
      },
    ]);
    const pods: Record<string, V1Pod> = Object.fromEntries(api.pods.map((p) => [p.metadata!.name!, p]));
    expect(pods.client!.spec!.nodeName).toBe(CP);
    expect(pods.web!.spec!.nodeName).toBe(W1);
    expect(pods.web!.metadata!.labels).toMatchObject({ 'netrepro.io/backs-web': 'true' });
    expect(pods.coredns!.metadata!.namespace).toBe('nr-abc123-kube-system');
    expect(pods.web!.spec!.containers.map((c) => [c.name, c.image, c.command])).toEqual([
      ['probe', 'nicolaka/netshoot:v0.13', ['sleep', 'infinity']],
      ['agent', 'node:20-alpine', ['sleep', 'infinity']],
      ['serve-0', 'node:20-alpine', ['node', '/netrepro/pod-agent.mjs', 'http', '--port=8080', '--name=web']],
    ]);
    // the DNS program answers with the ClusterIPs the cluster allocated, under the scenario's names
    expect(pods.coredns!.spec!.containers[2]!.command).toEqual([
      'node',
      '/netrepro/pod-agent.mjs',
      'dns',
      '--port=53',
      '--name=coredns',
      '--record=web.default.svc.cluster.local=10.96.100.1',
      '--record=kube-dns.kube-system.svc.cluster.local=10.96.100.2',
    ]);
    expect(recorded.addresses).toEqual({ 'svc/kube-dns': '10.96.100.2', 'node/node-b': '172.18.0.3' });
    expect(api.deleted).toEqual(['nr-abc123-kube-system', 'nr-abc123-default']);
  });

  it('runs probe commands in the probe container, the agent in the agent container, node tools from the probe image', () => {
    expect(recorded.execsFromPods.map((e) => [e.pod.namespace, e.pod.name, e.pod.container, e.argv[0]])).toEqual([
      ['nr-abc123-default', 'client', 'probe', 'curl'],
      ['nr-abc123-default', 'client', 'agent', 'node'],
    ]);
    expect(recorded.linesBeforeDestroy.slice(-2)).toEqual([
      `docker exec -i ${CP} sysctl -w net.bridge.bridge-nf-call-iptables=0`,
      `docker run --rm -i --label netrepro.io/run=abc123 --network container:${W1} --cap-add NET_ADMIN --cap-add NET_RAW --entrypoint conntrack nicolaka/netshoot:v0.13 -L`,
    ]);
  });
});
