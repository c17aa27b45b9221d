// minikube provider contract: the exact commands per CNI shape, misfits as skips, node exec, clean.
import { afterEach, describe, expect, it } from 'vitest';
import { cleanMinikubeLeftovers } from '../../src/providers/real/containers/minikube/clean-minikube-leftovers.ts';
import { MinikubeProvider } from '../../src/providers/real/containers/minikube/minikube-provider.ts';
import { UnsupportedScenarioError } from '../../src/providers/real/common/unsupported.ts';
import type { TopologySpec } from '../../src/model/scenario-schema.ts';
import { fakeTools, kubeProxySave, recordingKubeApi, runContext, topology, type Reply } from './fake-env.ts';

const P = 'nr-abc123-cluster';
const START = (cni: string, nodes: number) =>
  `minikube start -p ${P} --driver=docker --nodes=${nodes} --cni=${cni} --kubernetes-version=v1.35.1 --extra-config=kubeadm.pod-network-cidr=10.244.0.0/16 --wait=all`;
const READY = `kubectl --kubeconfig WORK/abc123/kubeconfig --context ${P} wait --for=condition=Ready nodes --all --timeout=300s`;
const DELETE = `minikube delete -p ${P}`;
const NODES = [P, `${P}-m02`];
const SAVE = (node: string) => `minikube ssh -p ${P} --node ${node} -- sudo iptables-save`;

/** Each node's rules once its kube-proxy holds the topology's endpoints. */
const synced = (t: TopologySpec): Reply[] =>
  t.nodes.map((n, i) => ({
    tool: 'minikube',
    args: ['ssh', '-p', P, '--node', NODES[i]!, '--', 'sudo', 'iptables-save'],
    stdout: kubeProxySave(t, n.name),
  }));

let fakes: ReturnType<typeof fakeTools> | undefined;
afterEach(() => fakes?.restore());

function setup(replies: Reply[] = [], t?: TopologySpec) {
  fakes = fakeTools([...replies, ...(t ? synced(t) : [])]);
  const work = `${fakes.dir}/work`;
  const { api, factory } = recordingKubeApi([
    { name: P, internalIP: '192.168.49.2', podCIDR: '10.244.0.0/24' },
    { name: `${P}-m02`, internalIP: '192.168.49.3', podCIDR: '10.244.1.0/24' },
  ]);
  const provider = new MinikubeProvider({ workDir: work }, { kubeApi: factory });
  return { api, provider, lines: () => fakes!.lines().map((l) => l.replaceAll(work, 'WORK')) };
}

describe('minikube provider', () => {
  for (const [cni, nodes] of [
    ['bridge', 1],
    ['flannel', 2],
  ] as const) {
    it(`provisions and destroys the ${cni} shape (${nodes} nodes) with exactly these commands`, async () => {
      const t = topology({ cni, nodes });
      const { provider, lines, api } = setup([], t);
      const cluster = await provider.provision(t, runContext());
      await cluster.destroy();
      expect(lines()).toEqual([START(cni, nodes), READY, ...NODES.slice(0, nodes).map(SAVE), DELETE]);
      expect(api.pods.find((p) => p.metadata!.name === 'web')!.spec!.nodeName).toBe(nodes === 1 ? P : `${P}-m02`);
    });
  }

  it("skips multi-node bridge and Cilium's kube-proxy replacement with the reason, creating nothing", async () => {
    const { provider, lines } = setup();
    const bridge = provider.provision(topology({ cni: 'bridge', nodes: 2 }), runContext());
    await expect(bridge).rejects.toBeInstanceOf(UnsupportedScenarioError);
    await expect(bridge).rejects.toMatchObject({
      skipReason: 'minikube: minikube --cni=bridge has no routes between nodes (single node only)',
    });
    await expect(
      provider.provision(topology({ cni: 'cilium', nodes: 1, startOrder: ['cilium'] }), runContext()),
    ).rejects.toMatchObject({
      skipReason:
        "minikube: Cilium's kube-proxy replacement needs a cluster without kube-proxy; netrepro's minikube clusters run kubeadm's",
    });
    expect(lines()).toEqual([]);
  });

  it('runs node commands through minikube ssh, quoted for the remote shell, and tcpdump from the probe image', async () => {
    const t = topology({ cni: 'flannel', nodes: 2 });
    const { provider, lines } = setup([], t);
    const cluster = await provider.provision(t, runContext());
    await cluster.node('node-b').exec(['sh', '-c', "echo 'x y'"]);
    await cluster.node('node-a').exec(['tcpdump', '-i', 'any', '-w', '/tmp/r/node-a/capture.pcap']);
    expect(lines().at(-1)).toBe(
      `docker run --rm -i --label netrepro.io/run=abc123 --network container:${P} --cap-add NET_ADMIN --cap-add NET_RAW -v /tmp/r/node-a:/tmp/r/node-a --entrypoint tcpdump nicolaka/netshoot:v0.13 -i any -w /tmp/r/node-a/capture.pcap`,
    );
    expect(fakes!.calls().at(-2)!.argv).toEqual([
      'ssh',
      '-p',
      P,
      '--node',
      `${P}-m02`,
      '--',
      'sudo',
      'sh',
      '-c',
      `'echo '\\''x y'\\'''`,
    ]);
    await cluster.destroy();
  });

  it('clean deletes only profiles with the run prefix', async () => {
    setup([
      {
        tool: 'minikube',
        args: ['profile', 'list'],
        stdout: JSON.stringify({
          valid: [{ Name: 'minikube' }, { Name: 'nr-abc123-cluster' }],
          invalid: [{ Name: 'nr-fff000-cluster' }],
        }),
      },
    ]);
    expect(await cleanMinikubeLeftovers(async () => true)).toEqual([
      'minikube profile nr-abc123-cluster',
      'minikube profile nr-fff000-cluster',
    ]);
    expect(fakes!.lines()).toEqual([
      'minikube profile list -o json',
      'minikube delete -p nr-abc123-cluster',
      'minikube delete -p nr-fff000-cluster',
      // then the containers of those runs' hosts outside the cluster
      'docker ps -a --filter label=netrepro.io/run --format {{.ID}}\t{{.Names}}\t{{.Label "netrepro.io/run"}}',
    ]);
  });
});
