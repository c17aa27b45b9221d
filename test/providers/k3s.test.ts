// k3s provider contract: server arguments per CNI shape, helm for cilium, context renamed, misfits.
import { afterEach, describe, expect, it } from 'vitest';
import type { K3sStartInput } from '../../src/providers/real/containers/k3s/k3s-create.ts';
import { cleanK3sLeftovers } from '../../src/providers/real/containers/k3s/clean-k3s-leftovers.ts';
import { K3sProvider } from '../../src/providers/real/containers/k3s/k3s-provider.ts';
import type { TopologySpec } from '../../src/model/scenario-schema.ts';
import { fakeTools, kubeProxySave, recordingKubeApi, runContext, topology } from './fake-env.ts';

const KUBECONFIG = `apiVersion: v1
clusters:
  - cluster: { server: 'https://localhost:32771' }
    name: default
contexts:
  - context: { cluster: default, user: default }
    name: default
current-context: default
users:
  - name: default
    user: {}
kind: Config
`;

let fakes: ReturnType<typeof fakeTools> | undefined;
afterEach(() => fakes?.restore());

/** The node's rules once its kube-proxy holds the topology's endpoints. */
const synced = (t: TopologySpec) => [
  { tool: 'docker', args: ['exec', '-i', 'nr-abc123-cluster', 'iptables-save'], stdout: kubeProxySave(t, 'node-a') },
];

function setup(cni?: 'flannel', t?: TopologySpec) {
  fakes = fakeTools(t ? synced(t) : []);
  const work = `${fakes.dir}/work`;
  const started: K3sStartInput[] = [];
  const stopped: string[] = [];
  const { api, factory } = recordingKubeApi([
    { name: '3f2a9c1b7d4e', internalIP: '172.17.0.3', podCIDR: '10.244.0.0/24' },
  ]);
  const provider = new K3sProvider(
    { workDir: work, cni },
    {
      kubeApi: factory,
      startK3s: async (input) => (
        started.push(input),
        { name: input.name, kubeconfig: KUBECONFIG, stop: async () => void stopped.push(input.name) }
      ),
    },
  );
  return { api, provider, started, stopped, lines: () => fakes!.lines().map((l) => l.replaceAll(work, 'WORK')) };
}

const KC = '--kubeconfig WORK/abc123/kubeconfig --context nr-abc123-cluster';

describe('k3s provider', () => {
  it('flannel (NETREPRO_CNI=flannel runs bridge scenarios on it): k3s defaults, one labelled container, stopped on destroy', async () => {
    const t = topology({ cni: 'bridge', nodes: 1 });
    const { provider, started, stopped, lines, api } = setup('flannel', t);
    const cluster = await provider.provision(t, runContext());
    await cluster.node('node-a').exec(['iptables-save', '-c']);
    await cluster.destroy();
    expect(started).toEqual([
      {
        image: 'rancher/k3s:v1.35.1-k3s1',
        name: 'nr-abc123-cluster',
        labels: { 'netrepro.io/run': 'abc123' },
        command: ['server', '--disable=traefik', '--cluster-cidr=10.244.0.0/16'],
        network: 'bridge',
      },
    ]);
    expect(lines()).toEqual([
      `kubectl ${KC} wait --for=condition=Ready nodes --all --timeout=300s`,
      'docker exec -i nr-abc123-cluster iptables-save',
      'docker exec -i nr-abc123-cluster iptables-save -c',
    ]);
    expect(stopped).toEqual(['nr-abc123-cluster']);
    expect(api.accesses.every((a) => a.context === 'nr-abc123-cluster')).toBe(true);
    expect(api.pods.every((p) => p.spec!.nodeName === '3f2a9c1b7d4e')).toBe(true);
  }, 30_000);

  it("cilium replacing kube-proxy: no flannel, no network policy, no kube-proxy of k3s's or netrepro's, then helm", async () => {
    const t = topology({ cni: 'cilium', nodes: 1, startOrder: ['cilium'] });
    const { provider, started, lines } = setup(undefined, t);
    await (await provider.provision(t, runContext())).destroy();
    expect(started[0]!.command).toEqual([
      'server',
      '--disable=traefik',
      '--cluster-cidr=10.244.0.0/16',
      '--flannel-backend=none',
      '--disable-network-policy',
      '--disable-kube-proxy',
    ]);
    expect(lines()).toEqual([
      'helm install cilium cilium --repo https://helm.cilium.io --version 1.20.0 --namespace kube-system --set ipam.mode=kubernetes --set image.pullPolicy=IfNotPresent ' +
        '--set operator.replicas=1 --set kubeProxyReplacement=true --set bpf.masquerade=true --set socketLB.enabled=false --set routingMode=native --set autoDirectNodeRoutes=true --set ipv4NativeRoutingCIDR=10.244.0.0/16 ' +
        // the API server on the node's loopback, where k3s's own kubeconfig has it
        '--set k8sServiceHost=127.0.0.1 --set k8sServicePort=6443 --wait --timeout 10m ' +
        '--kubeconfig WORK/abc123/kubeconfig --kube-context nr-abc123-cluster',
      `kubectl ${KC} -n kube-system rollout status daemonset/cilium --timeout=300s`,
      `kubectl ${KC} wait --for=condition=Ready nodes --all --timeout=300s`,
    ]);
  }, 30_000);

  it('skips multi-node scenarios and plain bridge without starting anything', async () => {
    const { provider, started } = setup();
    await expect(provider.provision(topology({ cni: 'bridge', nodes: 2 }), runContext())).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      skipReason: 'k3s: K3sContainer runs one server node, the scenario has 2 nodes',
    });
    const bridge = new K3sProvider({ workDir: '/nonexistent' });
    await expect(bridge.provision(topology({ cni: 'bridge', nodes: 1 }), runContext())).rejects.toMatchObject({
      code: 'UNSUPPORTED',
    });
    expect(started).toEqual([]);
  });

  it('clean removes labelled containers of finished runs only', async () => {
    fakes = fakeTools([
      {
        tool: 'docker',
        args: ['ps'],
        stdout: 'c1\tnr-abc123-cluster\tabc123\nc2\tfoo\t\nc3\tnr-def456-cluster\tdef456\n',
      },
    ]);
    expect(await cleanK3sLeftovers(async (runId) => runId === 'abc123')).toEqual(['container nr-abc123-cluster']);
    expect(fakes.lines()).toEqual([
      'docker ps -a --filter label=netrepro.io/run --format {{.ID}}\t{{.Names}}\t{{.Label "netrepro.io/run"}}',
      'docker rm -f c1',
    ]);
  });
});
