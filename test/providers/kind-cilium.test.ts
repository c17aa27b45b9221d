import { describe, expect, it } from 'vitest';
import { loadScenarioFile } from '../../src/model/load-scenario.ts';
import { packagePath } from '../../src/model/package-root.ts';
import { CliNodeTarget, dockerNode } from '../../src/providers/real/containers/cli-node-target.ts';
import { KubeCli } from '../../src/providers/real/common/kube-cli.ts';
import { KindProvider } from '../../src/providers/real/containers/kind/kind-provider.ts';
import { NodeComponents, type NodeComponentsInput } from '../../src/providers/real/containers/node-components.ts';
import { clientPod, ciliumPod, kubeProxyPod, nodePodsQuery, podList, holdPatchCommands } from './component-pods.ts';
import { recordedRun, recordingKubeApi, runContext, type Reply } from './fake-env.ts';

const CP = 'nr-abc123-cluster-control-plane';
const CTX = 'kind-nr-abc123-cluster';
const HOST = 'nr-abc123-host-docs';
const METRICS = ['exec', '-i', CP, 'curl', '-fsS', 'http://127.0.0.1:10249/metrics'];
const AGENT = packagePath('src/providers/netns/agent/pod-agent.mjs');

const { workDir, fakes } = recordedRun(CTX);

const pods = (selector: string, namespace?: string) => nodePodsQuery(CP, selector, namespace);
const CILIUM_PODS = pods('k8s-app=cilium');
const KUBE_PROXY_PODS = pods('k8s-app=kube-proxy');
const WORKLOAD_PODS = pods('netrepro.io/run=abc123', 'all');

const cilium = ciliumPod;
const kubeProxy = kubeProxyPod;
const client = clientPod;

describe('kind/cilium runs the FORWARD race', () => {
  it('provisions the hold affinity in start order, the docs host beside the nodes, and reboots node-a Cilium first', async () => {
    const work = workDir('netrepro-kind-work-');
    const kc = `${work}/abc123/kubeconfig`;
    const f = fakes(
      kc,
      [
        // before the reboot
        { args: CILIUM_PODS, stdout: podList([cilium(['c1'])]), once: true },
        { args: KUBE_PROXY_PODS, stdout: podList([kubeProxy('old')]), once: true },
        { args: WORKLOAD_PODS, stdout: podList([client(['p1', 'p2'], '10.244.0.5')]), once: true },
        // held: the DaemonSet controller removed kube-proxy's pod
        { args: KUBE_PROXY_PODS, stdout: podList([]), once: true },
        // the API server restarts with its node; then it still shows the agent from before the restart, then
        // the agent's new containers Ready
        { args: CILIUM_PODS, exitCode: 1, once: true },
        { args: CILIUM_PODS, stdout: podList([cilium(['c1'])]), once: true },
        { args: CILIUM_PODS, stdout: podList([cilium(['c2'])]), once: true },
        // let back: a new kube-proxy pod, first starting, then Ready
        { args: KUBE_PROXY_PODS, stdout: podList([kubeProxy('new', false)]), once: true },
        { args: KUBE_PROXY_PODS, stdout: podList([kubeProxy('new')]), once: true },
        // the scenario's pod in its new sandbox, with a new address
        { args: WORKLOAD_PODS, stdout: podList([client(['p3', 'p4'], '10.244.0.7')]), once: true },
      ],
      [
        { tool: 'docker', args: ['logs', `${HOST}-serve-0`], stdout: 'ready http 80\n' },
        { tool: 'docker', args: ['inspect'], stdout: '172.18.0.9\n' },
        { tool: 'docker', args: METRICS, stdout: 'kubeproxy_sync_proxy_rules_last_timestamp_seconds 9.9e+09\n' },
      ],
    );
    const { scenario } = await loadScenarioFile(packagePath('scenarios/cilium-kube-proxy-forward-race.yaml'));
    const { factory } = recordingKubeApi([
      { name: CP, internalIP: '172.18.0.2', podCIDR: '10.244.0.0/24', kubeletVersion: 'v1.35.1' },
    ]);
    const provider = new KindProvider({ workDir: work }, { kubeApi: factory });
    const cluster = await provider.provision(scenario.topology, runContext());
    const provisioned = f.lines().length;
    expect(cluster.address('host/docs')).toBe('172.18.0.9');

    await cluster.perform({ kind: 'reboot', node: 'node-a', order: ['cilium', 'kube-proxy'] });
    expect(cluster.address('pod/client')).toBe('10.244.0.7');
    const rebooted = f.lines().length;
    await cluster.destroy();

    const lines = f.lines().map((l) => l.replaceAll(work, 'WORK'));
    const kubectl = `kubectl --kubeconfig WORK/abc123/kubeconfig --context ${CTX}`;
    const patch = (ds: string, component: 'kube-proxy' | 'cilium') => holdPatchCommands(kubectl, ds, component);
    expect(lines.slice(0, provisioned)).toEqual([
      expect.stringMatching(/^kind create cluster /),
      expect.stringMatching(
        /^helm install cilium .*--set kubeProxyReplacement=false --set bpf\.masquerade=true .*--set nodePort\.enabled=true --set bpf\.hostLegacyRouting=true --set k8sServiceHost=nr-abc123-cluster-control-plane/,
      ),
      `${kubectl} -n kube-system rollout status daemonset/cilium --timeout=300s`,
      `${kubectl} wait --for=condition=Ready nodes --all --timeout=300s`,
      `${kubectl} -n kube-system get deployments -o name`,
      // kube-proxy first, then Cilium: Cilium's jump ends up on top, as startOrder [kube-proxy, cilium] has it
      ...patch('kube-proxy', 'kube-proxy'),
      ...patch('cilium', 'cilium'),
      `docker run -d --name ${HOST} --label netrepro.io/run=abc123 --network kind --entrypoint sleep nicolaka/netshoot:v0.13 infinity`,
      `docker run -d --name ${HOST}-agent --label netrepro.io/run=abc123 --network container:${HOST} -v ${AGENT}:/netrepro/pod-agent.mjs:ro --entrypoint sleep node:20-alpine infinity`,
      `docker run -d --name ${HOST}-serve-0 --label netrepro.io/run=abc123 --network container:${HOST} -v ${AGENT}:/netrepro/pod-agent.mjs:ro --entrypoint node node:20-alpine /netrepro/pod-agent.mjs http --port=80 --name=docs`,
      `docker logs ${HOST}-serve-0`,
      `docker inspect -f {{(index .NetworkSettings.Networks "kind").IPAddress}} ${HOST}`,
      `docker exec -i ${CP} iptables-save`,
    ]);
    const get = (args: string[]) => `${kubectl} ${args.join(' ')}`;
    expect(lines.slice(provisioned, rebooted)).toEqual([
      get(CILIUM_PODS),
      get(KUBE_PROXY_PODS),
      get(WORKLOAD_PODS),
      // kube-proxy is kept off the node before it goes down...
      `${kubectl} label node ${CP} --overwrite netrepro.io/hold-kube-proxy=true`,
      get(KUBE_PROXY_PODS),
      `docker restart ${CP}`,
      // ...until Cilium is Ready there again
      get(CILIUM_PODS),
      get(CILIUM_PODS),
      get(CILIUM_PODS),
      `${kubectl} label node ${CP} --overwrite netrepro.io/hold-kube-proxy-`,
      get(KUBE_PROXY_PODS),
      get(KUBE_PROXY_PODS),
      // kube-proxy synced its rules since the restart
      `docker ${METRICS.join(' ')}`,
      `${kubectl} wait --for=condition=Ready node/${CP} --timeout=180s`,
      get(WORKLOAD_PODS),
      `docker exec -i ${CP} iptables-save`,
    ]);
    expect(lines.slice(rebooted)).toEqual([
      `docker rm -f ${HOST}-serve-0 ${HOST}-agent ${HOST}`,
      'kind delete cluster --name nr-abc123-cluster --kubeconfig WORK/abc123/kubeconfig',
    ]);
  });

  it('runs the agent on a host in its agent container, other commands in the host itself', async () => {
    const work = workDir('netrepro-kind-work-');
    const f = fakes(
      `${work}/abc123/kubeconfig`,
      [],
      [
        { tool: 'docker', args: ['logs'], stdout: 'ready http 80\n' },
        { tool: 'docker', args: ['inspect'], stdout: '172.18.0.9\n' },
      ],
    );
    const { scenario } = await loadScenarioFile(packagePath('scenarios/cilium-kube-proxy-forward-race.yaml'));
    const { factory } = recordingKubeApi([{ name: CP, internalIP: '172.18.0.2', kubeletVersion: 'v1.35.1' }]);
    const cluster = await new KindProvider({ workDir: work }, { kubeApi: factory }).provision(
      scenario.topology,
      runContext(),
    );
    await cluster.target('host/docs').exec([...cluster.agentCommand, 'dns-query', '--server=10.96.0.10']);
    await cluster.target('host/docs').exec(['curl', '-sS', 'http://172.18.0.2/']);
    await cluster.target('host/docs').exec(['tcpdump', '-i', 'eth0']);
    const lines = f.lines();
    await cluster.destroy();
    expect(lines.slice(-3)).toEqual([
      `docker exec -i ${HOST}-agent node /netrepro/pod-agent.mjs dns-query --server=10.96.0.10`,
      `docker exec -i ${HOST} curl -sS http://172.18.0.2/`,
      `docker run --rm -i --label netrepro.io/run=abc123 --network container:${HOST} --cap-add NET_ADMIN --cap-add NET_RAW --entrypoint tcpdump nicolaka/netshoot:v0.13 -i eth0`,
    ]);
  });

  it('removes the host containers made so far when a server of the host cannot start, then the cluster', async () => {
    const work = workDir('netrepro-kind-work-');
    const f = fakes(
      `${work}/abc123/kubeconfig`,
      [],
      [
        {
          tool: 'docker',
          args: ['run', '-d', '--name', `${HOST}-serve-0`],
          exitCode: 125,
          stderr: 'port is already allocated',
        },
      ],
    );
    const { scenario } = await loadScenarioFile(packagePath('scenarios/cilium-kube-proxy-forward-race.yaml'));
    const { factory } = recordingKubeApi([{ name: CP, internalIP: '172.18.0.2', kubeletVersion: 'v1.35.1' }]);
    await expect(
      new KindProvider({ workDir: work }, { kubeApi: factory }).provision(scenario.topology, runContext()),
    ).rejects.toThrow(/port is already allocated/);
    expect(f.lines().slice(-2)).toEqual([
      `docker rm -f ${HOST}-serve-0 ${HOST}-agent ${HOST}`,
      `kind delete cluster --name nr-abc123-cluster --kubeconfig ${work}/abc123/kubeconfig`,
    ]);
  });
});

describe('node components on a real cluster', () => {
  const kubeconfig = '/tmp/netrepro-test-kubeconfig';
  const kubectl = new KubeCli({ kubeconfig, context: CTX }, { created: CTX, allowContexts: [] });
  const KC = `kubectl --kubeconfig ${kubeconfig} --context ${CTX}`;
  const components = (over: Partial<NodeComponentsInput> = {}) =>
    new NodeComponents({
      kubectl,
      nodes: new Map([
        ['node-a', { target: new CliNodeTarget('node/node-a', dockerNode(CP, 'netshoot', 'abc123')), k8sName: CP }],
      ]),
      k8sVersion: 'v1.35.1',
      kubeProxyProfile: '1.15',
      services: false,
      startOrder: ['kube-proxy', 'cilium'],
      holdable: new Set(['cilium']),
      restartNode: async () => {},
      bootSysctls: new Map(),
      workloadSelector: 'netrepro.io/run=abc123',
      onWorkloadBack: async () => {},
      signal: new AbortController().signal,
      log: () => {},
      readyTimeoutMs: 1200,
      ...over,
    });
  const beLiberal = (value: string): Reply => ({
    tool: 'docker',
    args: ['exec', '-i', CP, 'sysctl', '-n', 'net.netfilter.nf_conntrack_tcp_be_liberal'],
    stdout: `${value}\n`,
  });

  it('starts kube-proxy by hand: its pod deleted, the replacement Ready, its rules synced since', async () => {
    const f = fakes(
      kubeconfig,
      [
        { args: KUBE_PROXY_PODS, stdout: podList([kubeProxy('old')]), once: true },
        { args: KUBE_PROXY_PODS, stdout: podList([kubeProxy('new')]) },
      ],
      [
        beLiberal('1'),
        { tool: 'docker', args: METRICS, stdout: 'kubeproxy_sync_proxy_rules_last_timestamp_seconds 9.9e+09\n' },
      ],
    );
    // be_liberal is on: v1.35's kube-proxy leaves the DROP out as 1.29 does
    await components().start('node-a', 'kube-proxy', '1.29');
    expect(f.lines()).toEqual([
      `docker exec -i ${CP} sysctl -n net.netfilter.nf_conntrack_tcp_be_liberal`,
      `${KC} ${KUBE_PROXY_PODS.join(' ')}`,
      `${KC} -n kube-system delete pod kube-proxy-old --wait=true --timeout=120s`,
      `${KC} ${KUBE_PROXY_PODS.join(' ')}`,
      `docker ${METRICS.join(' ')}`,
    ]);
  });

  it('starts Cilium by hand: its pod deleted and the replacement Ready; no version to check, no kube-proxy sync to wait for', async () => {
    const f = fakes(kubeconfig, [
      { args: CILIUM_PODS, stdout: podList([cilium(['c1'])]), once: true },
      { args: CILIUM_PODS, stdout: podList([{ ...cilium(['c2']), uid: 'u-cilium-new', name: 'cilium-y' }]) },
    ]);
    await components().start('node-a', 'cilium');
    expect(f.lines()).toEqual([
      `${KC} ${CILIUM_PODS.join(' ')}`,
      `${KC} -n kube-system delete pod cilium-x --wait=true --timeout=120s`,
      `${KC} ${CILIUM_PODS.join(' ')}`,
    ]);
  });

  it('refuses, before touching anything, a kube-proxy release the cluster cannot stand for', async () => {
    const f = fakes(kubeconfig, [], [beLiberal('0')]);
    // 1.14 writes no INVALID DROP and deletes the shared jump at start-up
    await expect(components().start('node-a', 'kube-proxy', '1.14')).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      message: expect.stringMatching(/cannot start as 1\.14 .*never and unless-be-liberal/),
    });
    expect(f.lines()).toEqual([`docker exec -i ${CP} sysctl -n net.netfilter.nf_conntrack_tcp_be_liberal`]);
  });

  it('refuses the profile release with be_liberal on: 1.15 writes the DROP, v1.35 would leave it out', async () => {
    fakes(kubeconfig, [], [beLiberal('1')]);
    await expect(components().start('node-a', 'kube-proxy')).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      message: expect.stringMatching(
        /with nf_conntrack_tcp_be_liberal=1 as it starts, 1\.15 writes the DROP and v1\.35\.1 does not/,
      ),
    });
  });

  it('refuses a version for Cilium and a component the cluster does not run', async () => {
    fakes(kubeconfig, []);
    await expect(components().start('node-a', 'cilium', '1.29')).rejects.toMatchObject({ code: 'UNSUPPORTED' });
    await expect(components().start('node-a', 'flannel')).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      message: 'this cluster runs no flannel (its components: kube-proxy, cilium)',
    });
  });

  it('refuses a reboot that would start a component it cannot hold off the node, before the reboot', async () => {
    const f = fakes(kubeconfig, []);
    await expect(components().reboot('node-a', ['cilium', 'kube-proxy'])).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      message: expect.stringMatching(/starts kube-proxy after cilium needs kube-proxy held off the node/),
    });
    expect(f.lines()).toEqual([]);
  });

  it('a component that never gets Ready after the reboot is a clear error, and the hold is lifted', async () => {
    const f = fakes(kubeconfig, [
      { args: KUBE_PROXY_PODS, stdout: podList([kubeProxy('old')]), once: true },
      { args: CILIUM_PODS, stdout: podList([cilium(['c1'])]), once: true },
      { args: WORKLOAD_PODS, stdout: podList([]), once: true },
      { args: CILIUM_PODS, stdout: podList([]), once: true },
      // kube-proxy's containers after the restart never pass readiness
      { args: KUBE_PROXY_PODS, stdout: podList([{ ...kubeProxy('old', false), containers: ['k-again'] }]) },
    ]);
    let restarted = 0;
    const bootSysctls = new Map([['node-a', { 'net.ipv4.conf.all.rp_filter': 2 }]]);
    const error = await components({ restartNode: async () => void restarted++, bootSysctls })
      .reboot('node-a')
      .catch((e: Error) => e);
    expect(error).toMatchObject({
      code: 'LAB_FAILED',
      message: expect.stringMatching(
        /^kube-proxy on node nr-abc123-cluster-control-plane Ready again: not within 1\.2 s \(pods there: kube-system\/kube-proxy-old not Ready\)$/,
      ),
    });
    expect(restarted).toBe(1);
    // the node's own settings come back with it, as they stay over the lab's reboot
    expect(f.lines().filter((l) => l.startsWith('docker'))).toEqual([
      `docker exec -i ${CP} sysctl -w net.ipv4.conf.all.rp_filter=2`,
    ]);
    const labels = f.lines().filter((l) => l.includes(' label node '));
    expect(labels).toEqual([
      `${KC} label node ${CP} --overwrite netrepro.io/hold-cilium=true`,
      // lifted: Cilium was never let back, so the hold goes on the way out
      `${KC} label node ${CP} --overwrite netrepro.io/hold-cilium-`,
    ]);
  });
});
