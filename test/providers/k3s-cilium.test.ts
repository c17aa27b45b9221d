// k3s running the Cilium FORWARD race through the shared real layer: k3s without its own kube-proxy, upstream
// kube-proxy deployed as kubeadm's DaemonSet at the release k3s runs, Cilium from the pinned chart beside it, the
// hold affinity on both DaemonSets, a host outside the cluster as containers on docker's default network, a
// reboot (`docker restart` of the k3s container, the kubeconfig pointed at the API server's new host port) that
// starts the components in the scenario's order, a component started by hand, and their refusals, all as
// recorded commands.
import type { V1ClusterRoleBinding, V1ConfigMap, V1DaemonSet } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { loadScenarioFile } from '../../src/model/load-scenario.ts';
import { packagePath } from '../../src/model/package-root.ts';
import { COMPONENT_DAEMONSETS } from '../../src/providers/real/containers/component-daemonsets.ts';
import type { K3sStartInput } from '../../src/providers/real/containers/k3s/k3s-create.ts';
import { kubeProxyManifest, upstreamRelease } from '../../src/providers/real/containers/k3s/k3s-kube-proxy.ts';
import { K3sProvider } from '../../src/providers/real/containers/k3s/k3s-provider.ts';
import { restartK3sNode, withServerPort } from '../../src/providers/real/containers/k3s/k3s-reboot.ts';
import { clientPod, ciliumPod, kubeProxyPod, nodePodsQuery, podList, holdPatchCommands } from './component-pods.ts';
import { recordedRun, recordingKubeApi, runContext, type Reply } from './fake-env.ts';

const C = 'nr-abc123-cluster';
/** The k3s node's name: the container's hostname, not its name. */
const NODE = '3f2a9c1b7d4e';
const HOST = 'nr-abc123-host-docs';
const AGENT = packagePath('src/providers/netns/agent/pod-agent.mjs');
const PROBE = `docker run --rm -i --label netrepro.io/run=abc123 --network container:${C} --cap-add NET_ADMIN --cap-add NET_RAW`;
const METRICS = ['run', '--rm', '-i', '--label', 'netrepro.io/run=abc123', '--network', `container:${C}`];
const SYNCED = 'kubeproxy_sync_proxy_rules_last_timestamp_seconds 9.9e+09\n';
const CILIUM_PODS = nodePodsQuery(NODE, 'k8s-app=cilium');
const KUBE_PROXY_PODS = nodePodsQuery(NODE, 'k8s-app=kube-proxy');
const WORKLOAD_PODS = nodePodsQuery(NODE, 'netrepro.io/run=abc123', 'all');
const BE_LIBERAL = ['exec', '-i', C, 'sysctl', '-n', 'net.netfilter.nf_conntrack_tcp_be_liberal'];

const KUBECONFIG = `apiVersion: v1
clusters:
  - cluster: { certificate-authority-data: Q0E=, server: 'https://localhost:32771' }
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

const { workDir, fakes, tools } = recordedRun(C);

/** The race scenario's host outside the cluster, started on docker's default network and its address read. */
const HOST_STARTED = [
  `docker run -d --name ${HOST} --label netrepro.io/run=abc123 --network bridge --entrypoint sleep nicolaka/netshoot:v0.13 infinity`,
  `docker run -d --name ${HOST}-agent --label netrepro.io/run=abc123 --network container:${HOST} -v ${AGENT}:/netrepro/pod-agent.mjs:ro --entrypoint sleep node:20-alpine infinity`,
  `docker run -d --name ${HOST}-serve-0 --label netrepro.io/run=abc123 --network container:${HOST} -v ${AGENT}:/netrepro/pod-agent.mjs:ro --entrypoint node node:20-alpine /netrepro/pod-agent.mjs http --port=80 --name=docs`,
  `docker logs ${HOST}-serve-0`,
  `docker inspect -f {{(index .NetworkSettings.Networks "bridge").IPAddress}} ${HOST}`,
];

/** The host of the race scenario starts, and its address on docker's default network is known. */
const hostReplies: Reply[] = [
  { tool: 'docker', args: ['logs', `${HOST}-serve-0`], stdout: 'ready http 80\n' },
  {
    tool: 'docker',
    args: ['inspect', '-f', '{{(index .NetworkSettings.Networks "bridge").IPAddress}}', HOST],
    stdout: '172.17.0.9\n',
  },
];

async function race() {
  return (await loadScenarioFile(packagePath('scenarios/cilium-kube-proxy-forward-race.yaml'))).scenario;
}

function provider(work: string) {
  const started: K3sStartInput[] = [];
  const stopped: string[] = [];
  const { api, factory } = recordingKubeApi([
    { name: NODE, internalIP: '172.17.0.3', podCIDR: '10.244.0.0/24', kubeletVersion: 'v1.35.1+k3s1' },
  ]);
  const k3s = new K3sProvider(
    { workDir: work },
    {
      kubeApi: factory,
      startK3s: async (input) => (
        started.push(input),
        { name: input.name, kubeconfig: KUBECONFIG, stop: async () => void stopped.push(input.name) }
      ),
    },
  );
  return { k3s, api, started, stopped };
}

describe('k3s/cilium runs the FORWARD race', () => {
  it("provisions k3s without its kube-proxy, kubeadm's kube-proxy DaemonSet, Cilium beside it, the hold affinity and the docs host, then reboots node-a Cilium first", async () => {
    const work = workDir();
    const kc = `${work}/abc123/kubeconfig`;
    const f = fakes(
      kc,
      [
        // before the reboot
        { args: CILIUM_PODS, stdout: podList([ciliumPod(['c1'])]), once: true },
        { args: KUBE_PROXY_PODS, stdout: podList([kubeProxyPod('old')]), once: true },
        { args: WORKLOAD_PODS, stdout: podList([clientPod(['p1', 'p2'], '10.244.0.5')]), once: true },
        // held: the DaemonSet controller removed kube-proxy's pod
        { args: KUBE_PROXY_PODS, stdout: podList([]), once: true },
        // the API server restarts with the node, then the agent's new containers are Ready
        { args: CILIUM_PODS, exitCode: 1, once: true },
        { args: CILIUM_PODS, stdout: podList([ciliumPod(['c2'])]), once: true },
        // let back: a new kube-proxy pod, Ready
        { args: KUBE_PROXY_PODS, stdout: podList([kubeProxyPod('new')]), once: true },
        // the scenario's pod in its new sandbox, with a new address
        { args: WORKLOAD_PODS, stdout: podList([clientPod(['p3', 'p4'], '10.244.0.7')]), once: true },
      ],
      [
        ...hostReplies,
        // docker picked another host port for the API server at the restart
        { tool: 'docker', args: ['port', C, '6443/tcp'], stdout: '0.0.0.0:32999\n[::]:32999\n' },
        { tool: 'docker', args: METRICS, stdout: SYNCED },
      ],
    );
    const { k3s, api, started, stopped } = provider(work);
    const cluster = await k3s.provision((await race()).topology, runContext());
    const provisioned = f.lines().length;
    expect(started[0]!.command).toEqual([
      'server',
      '--disable=traefik',
      '--cluster-cidr=10.244.0.0/16',
      '--flannel-backend=none',
      '--disable-network-policy',
      '--disable-kube-proxy',
    ]);
    expect(started[0]!.network).toBe('bridge');
    expect(cluster.address('host/docs')).toBe('172.17.0.9');
    // the DaemonSet applied is kubeadm's shape at the release k3s runs
    expect(readFileSync(`${work}/abc123/kube-proxy.yaml`, 'utf8')).toBe(
      kubeProxyManifest({ release: 'v1.35.1', clusterCIDR: '10.244.0.0/16', server: 'https://127.0.0.1:6443' }),
    );

    const loads = api.accesses.length;
    await cluster.perform({ kind: 'reboot', node: 'node-a', order: ['cilium', 'kube-proxy'] });
    expect(cluster.address('pod/client')).toBe('10.244.0.7');
    // the run's kubeconfig follows the API server's new host port, and the API client loaded it anew
    const config = parse(readFileSync(kc, 'utf8')) as { clusters: { cluster: { server: string } }[] };
    expect(config.clusters[0]!.cluster.server).toBe('https://localhost:32999');
    const rebooted = f.lines().length;
    await cluster.pod('client').exec(['true']);
    expect(api.accesses.length).toBe(loads + 1);
    await cluster.destroy();

    const lines = f.lines().map((l) => l.replaceAll(work, 'WORK'));
    const kubectl = `kubectl --kubeconfig WORK/abc123/kubeconfig --context ${C}`;
    const patch = (ds: string, component: 'kube-proxy' | 'cilium') => holdPatchCommands(kubectl, ds, component);
    expect(lines.slice(0, provisioned)).toEqual([
      // kube-proxy before the CNI, as kubeadm's clusters have it
      `${kubectl} apply -f WORK/abc123/kube-proxy.yaml`,
      `${kubectl} -n kube-system rollout status daemonset/kube-proxy --timeout=300s`,
      // the same chart and values as kind; the agent reaches the API server on the node's loopback
      'helm install cilium cilium --repo https://helm.cilium.io --version 1.20.0 --namespace kube-system --set ipam.mode=kubernetes --set image.pullPolicy=IfNotPresent ' +
        '--set operator.replicas=1 --set kubeProxyReplacement=false --set bpf.masquerade=true --set socketLB.enabled=false --set routingMode=native --set autoDirectNodeRoutes=true --set ipv4NativeRoutingCIDR=10.244.0.0/16 --set nodePort.enabled=true --set bpf.hostLegacyRouting=true ' +
        '--set k8sServiceHost=127.0.0.1 --set k8sServicePort=6443 --wait --timeout 10m --kubeconfig WORK/abc123/kubeconfig --kube-context nr-abc123-cluster',
      `${kubectl} -n kube-system rollout status daemonset/cilium --timeout=300s`,
      `${kubectl} wait --for=condition=Ready nodes --all --timeout=300s`,
      // kube-proxy first, then Cilium: Cilium's jump ends up on top, as startOrder [kube-proxy, cilium] has it
      ...patch('kube-proxy', 'kube-proxy'),
      ...patch('cilium', 'cilium'),
      ...HOST_STARTED,
      `docker exec -i ${C} iptables-save`,
    ]);
    const get = (args: string[]) => `${kubectl} ${args.join(' ')}`;
    expect(lines.slice(provisioned, rebooted)).toEqual([
      get(CILIUM_PODS),
      get(KUBE_PROXY_PODS),
      get(WORKLOAD_PODS),
      // kube-proxy is kept off the node before it goes down...
      `${kubectl} label node ${NODE} --overwrite netrepro.io/hold-kube-proxy=true`,
      get(KUBE_PROXY_PODS),
      `docker restart ${C}`,
      `docker port ${C} 6443/tcp`,
      // ...until Cilium is Ready there again
      get(CILIUM_PODS),
      get(CILIUM_PODS),
      `${kubectl} label node ${NODE} --overwrite netrepro.io/hold-kube-proxy-`,
      get(KUBE_PROXY_PODS),
      // kube-proxy synced its rules since the restart (curl from the probe image, in the node's namespace)
      `${PROBE} --entrypoint curl nicolaka/netshoot:v0.13 -fsS http://127.0.0.1:10249/metrics`,
      `${kubectl} wait --for=condition=Ready node/${NODE} --timeout=180s`,
      get(WORKLOAD_PODS),
      `docker exec -i ${C} iptables-save`,
    ]);
    expect(lines.slice(rebooted)).toEqual([`docker rm -f ${HOST}-serve-0 ${HOST}-agent ${HOST}`]);
    expect(stopped).toEqual([C]);
  });

  it('starts kube-proxy by hand: its pod deleted, the replacement Ready, its rules synced since', async () => {
    const work = workDir();
    const f = fakes(
      `${work}/abc123/kubeconfig`,
      [
        { args: KUBE_PROXY_PODS, stdout: podList([kubeProxyPod('old')]), once: true },
        { args: KUBE_PROXY_PODS, stdout: podList([kubeProxyPod('new')]) },
      ],
      [
        ...hostReplies,
        { tool: 'docker', args: BE_LIBERAL, stdout: '1\n' },
        { tool: 'docker', args: METRICS, stdout: SYNCED },
      ],
    );
    const cluster = await provider(work).k3s.provision((await race()).topology, runContext());
    const before = f.lines().length;
    // be_liberal is on: v1.35's kube-proxy leaves the DROP out as 1.29 does
    await cluster.perform({ kind: 'start', node: 'node-a', component: 'kube-proxy', version: '1.29' });
    const kubectl = `kubectl --kubeconfig ${work}/abc123/kubeconfig --context ${C}`;
    expect(f.lines().slice(before)).toEqual([
      `docker ${BE_LIBERAL.join(' ')}`,
      `${kubectl} ${KUBE_PROXY_PODS.join(' ')}`,
      `${kubectl} -n kube-system delete pod kube-proxy-old --wait=true --timeout=120s`,
      `${kubectl} ${KUBE_PROXY_PODS.join(' ')}`,
      `${PROBE} --entrypoint curl nicolaka/netshoot:v0.13 -fsS http://127.0.0.1:10249/metrics`,
    ]);
    // a release the cluster's kube-proxy cannot stand for is refused before anything changes
    const at = f.lines().length;
    await expect(
      cluster.perform({ kind: 'start', node: 'node-a', component: 'kube-proxy', version: '1.14' }),
    ).rejects.toMatchObject({ code: 'UNSUPPORTED', message: expect.stringMatching(/cannot start as 1\.14 /) });
    expect(f.lines().slice(at)).toEqual([`docker ${BE_LIBERAL.join(' ')}`]);
    await cluster.destroy();
  });

  it('with flannel k3s keeps its own kube-proxy: the host is started, no DaemonSet is made, a reboot is refused', async () => {
    const work = workDir();
    const f = fakes(`${work}/abc123/kubeconfig`, [], hostReplies);
    const { factory } = recordingKubeApi([
      { name: NODE, internalIP: '172.17.0.3', podCIDR: '10.244.0.0/24', kubeletVersion: 'v1.35.1+k3s1' },
    ]);
    const started: K3sStartInput[] = [];
    const k3s = new K3sProvider(
      { workDir: work, cni: 'flannel' },
      {
        kubeApi: factory,
        startK3s: async (input) => (
          started.push(input), { name: input.name, kubeconfig: KUBECONFIG, stop: async () => {} }
        ),
      },
    );
    const topology = { ...(await race()).topology, cni: 'flannel' as const, startOrder: [] };
    const cluster = await k3s.provision(topology, runContext());
    expect(started[0]!.command).toEqual(['server', '--disable=traefik', '--cluster-cidr=10.244.0.0/16']);
    expect(cluster.address('host/docs')).toBe('172.17.0.9');
    const kubectl = `kubectl --kubeconfig ${work}/abc123/kubeconfig --context ${C}`;
    expect(f.lines()).toEqual([
      `${kubectl} wait --for=condition=Ready nodes --all --timeout=300s`,
      ...HOST_STARTED,
      `docker exec -i ${C} iptables-save`,
    ]);
    const at = f.lines().length;
    await expect(
      cluster.perform({ kind: 'reboot', node: 'node-a', order: ['kube-proxy', 'flannel'] }),
    ).rejects.toMatchObject({ code: 'UNSUPPORTED' });
    expect(f.lines().slice(at)).toEqual([]);
    await cluster.destroy();
  });
});

describe("k3s's kube-proxy DaemonSet", () => {
  const docs = parseAllDocuments(
    kubeProxyManifest({ release: 'v1.35.1', clusterCIDR: '10.244.0.0/16', server: 'https://127.0.0.1:6443' }),
  ).map((d) => d.toJS() as { kind: string });
  const byKind = <T>(kind: string) => docs.find((d) => d.kind === kind) as T;

  it("is kubeadm's: privileged on the host network, every taint tolerated, its ServiceAccount bound to system:node-proxier", () => {
    expect(docs.map((d) => d.kind)).toEqual(['ServiceAccount', 'ClusterRoleBinding', 'ConfigMap', 'DaemonSet']);
    const ds = byKind<V1DaemonSet>('DaemonSet');
    const pod = ds.spec!.template.spec!;
    const [container] = pod.containers;
    expect(container!.image).toBe('registry.k8s.io/kube-proxy:v1.35.1');
    expect(container!.command).toEqual([
      '/usr/local/bin/kube-proxy',
      '--config=/var/lib/kube-proxy/config.conf',
      '--hostname-override=$(NODE_NAME)',
    ]);
    expect(container!.securityContext).toEqual({ privileged: true });
    expect(pod.hostNetwork).toBe(true);
    expect(pod.tolerations).toEqual([{ operator: 'Exists' }]);
    expect(pod.serviceAccountName).toBe('kube-proxy');
    expect(byKind<V1ClusterRoleBinding>('ClusterRoleBinding').roleRef.name).toBe('system:node-proxier');
    // the hold affinity finds it as it finds kubeadm's, and replaces no affinity of its own
    const { namespace, name, selector } = COMPONENT_DAEMONSETS['kube-proxy'];
    expect([ds.metadata!.namespace, ds.metadata!.name]).toEqual([namespace, name]);
    expect(Object.entries(ds.spec!.selector.matchLabels!).map(([k, v]) => `${k}=${v}`)).toEqual([selector]);
    expect(pod.affinity).toBeUndefined();
  });

  it("runs iptables mode with the scenario's clusterCIDR, talking to the API server on the loopback with its token", () => {
    const data = byKind<V1ConfigMap>('ConfigMap').data!;
    expect(parse(data['config.conf']!)).toEqual({
      apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
      kind: 'KubeProxyConfiguration',
      clientConnection: { kubeconfig: '/var/lib/kube-proxy/kubeconfig.conf' },
      clusterCIDR: '10.244.0.0/16',
      mode: 'iptables',
      conntrack: { maxPerCore: 0 },
    });
    const kubeconfig = parse(data['kubeconfig.conf']!);
    expect(kubeconfig.clusters[0].cluster).toEqual({
      'certificate-authority': '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt',
      server: 'https://127.0.0.1:6443',
    });
    expect(kubeconfig.users[0].user).toEqual({ tokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token' });
  });

  it("takes the upstream release from the k3s node's kubelet version, and refuses one it cannot read", () => {
    expect(upstreamRelease('v1.35.1+k3s1')).toBe('v1.35.1');
    expect(upstreamRelease('v1.29.14')).toBe('v1.29.14');
    expect(() => upstreamRelease('v1.35.1-rc.0+k3s1')).toThrow(/not vX\.Y\.Z\+k3sN/);
  });
});

describe("a k3s node's reboot", () => {
  it("points the kubeconfig at the API server's new host port, keeping its scheme and host", () => {
    const moved = parse(withServerPort(KUBECONFIG, 40001)) as { clusters: { cluster: object }[] };
    expect(moved.clusters[0]!.cluster).toEqual({
      'certificate-authority-data': 'Q0E=',
      server: 'https://localhost:40001',
    });
  });

  it('fails clearly when docker publishes no port for the API server', async () => {
    const work = workDir();
    const kubeconfig = join(work, 'kubeconfig');
    const f = tools([{ tool: 'docker', args: ['port'], exitCode: 1, stderr: 'no public port 6443/tcp published' }]);
    const error = await restartK3sNode({ container: C, kubeconfig, run: runContext(), portTimeoutMs: 1200 })().catch(
      (e: Error) => e,
    );
    expect(error).toMatchObject({
      code: 'LAB_FAILED',
      message: expect.stringMatching(
        /no host port for its API server after the restart \(no public port 6443\/tcp published\)/,
      ),
    });
    // asked again until the time is up
    expect(f.lines().slice(0, 3)).toEqual([
      `docker restart ${C}`,
      `docker port ${C} 6443/tcp`,
      `docker port ${C} 6443/tcp`,
    ]);
  });

  it("refuses a container that is not the run's own", async () => {
    const f = tools([]);
    await expect(
      restartK3sNode({ container: 'k3s-server', kubeconfig: '/tmp/kc', run: runContext() })(),
    ).rejects.toMatchObject({ code: 'ENVIRONMENT' });
    expect(f.lines()).toEqual([]);
  });
});
