import { describe, expect, it } from 'vitest';
import { loadScenarioFile } from '../../src/model/load-scenario.ts';
import { packagePath } from '../../src/model/package-root.ts';
import {
  controlPlaneAliasArgv,
  restartMinikubeNode,
} from '../../src/providers/real/containers/minikube/minikube-reboot.ts';
import { MinikubeProvider } from '../../src/providers/real/containers/minikube/minikube-provider.ts';
import { clientPod, ciliumPod, kubeProxyPod, nodePodsQuery, podList, holdPatchCommands } from './component-pods.ts';
import { recordedRun, kubeProxySave, recordingKubeApi, runContext, topology, type Reply } from './fake-env.ts';

const P = 'nr-abc123-cluster';
const HOST = 'nr-abc123-host-docs';
const AGENT = packagePath('src/providers/netns/agent/pod-agent.mjs');
const SSH = `minikube ssh -p ${P} --node ${P} -- sudo`;
const METRICS = ['ssh', '-p', P, '--node', P, '--', 'sudo', 'curl', '-fsS', 'http://127.0.0.1:10249/metrics'];
const SYNCED = 'kubeproxy_sync_proxy_rules_last_timestamp_seconds 9.9e+09\n';
const CILIUM_PODS = nodePodsQuery(P, 'k8s-app=cilium');
const KUBE_PROXY_PODS = nodePodsQuery(P, 'k8s-app=kube-proxy');
const WORKLOAD_PODS = nodePodsQuery(P, 'netrepro.io/run=abc123', 'all');
const INSPECT_P = ['inspect', '-f', `{{(index .NetworkSettings.Networks "${P}").IPAddress}}`, P];
const BOOTED: Reply = { tool: 'docker', args: ['exec', P, 'systemctl', 'is-system-running'], stdout: 'running\n' };
const BE_LIBERAL = [
  'ssh',
  '-p',
  P,
  '--node',
  P,
  '--',
  'sudo',
  'sysctl',
  '-n',
  'net.netfilter.nf_conntrack_tcp_be_liberal',
];

const { workDir, fakes, tools } = recordedRun(P);

/** The host of the race scenario starts, and its address on the profile's network is known. */
const hostReplies: Reply[] = [
  { tool: 'docker', args: ['logs', `${HOST}-serve-0`], stdout: 'ready http 80\n' },
  {
    tool: 'docker',
    args: ['inspect', '-f', `{{(index .NetworkSettings.Networks "${P}").IPAddress}}`, HOST],
    stdout: '192.168.49.9\n',
  },
];

async function race() {
  return (await loadScenarioFile(packagePath('scenarios/cilium-kube-proxy-forward-race.yaml'))).scenario;
}

function provider(work: string, readyTimeoutMs?: number) {
  const { factory } = recordingKubeApi([
    { name: P, internalIP: '192.168.49.2', podCIDR: '10.244.0.0/24', kubeletVersion: 'v1.35.1' },
  ]);
  return new MinikubeProvider({ workDir: work }, { kubeApi: factory, ...(readyTimeoutMs ? { readyTimeoutMs } : {}) });
}

describe('minikube/cilium runs the FORWARD race', () => {
  it('provisions Cilium from the chart, the hold affinity in start order and the docs host, then reboots node-a Cilium first', async () => {
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
        // the API server restarts with its node, then the agent's new containers are Ready
        { args: CILIUM_PODS, exitCode: 1, once: true },
        { args: CILIUM_PODS, stdout: podList([ciliumPod(['c2'])]), once: true },
        // let back: a new kube-proxy pod, Ready
        { args: KUBE_PROXY_PODS, stdout: podList([kubeProxyPod('new')]), once: true },
        // the scenario's pod in its new sandbox, with a new address
        { args: WORKLOAD_PODS, stdout: podList([clientPod(['p3', 'p4'], '10.244.0.7')]), once: true },
      ],
      [
        ...hostReplies,
        BOOTED,
        { tool: 'docker', args: INSPECT_P, stdout: '192.168.49.2\n' },
        { tool: 'minikube', args: METRICS, stdout: SYNCED },
      ],
    );
    const cluster = await provider(work).provision((await race()).topology, runContext());
    const provisioned = f.lines().length;
    expect(cluster.address('host/docs')).toBe('192.168.49.9');

    await cluster.perform({ kind: 'reboot', node: 'node-a', order: ['cilium', 'kube-proxy'] });
    expect(cluster.address('pod/client')).toBe('10.244.0.7');
    const rebooted = f.lines().length;
    await cluster.destroy();

    const lines = f.lines().map((l) => l.replaceAll(work, 'WORK'));
    const kubectl = `kubectl --kubeconfig WORK/abc123/kubeconfig --context ${P}`;
    const patch = (ds: string, component: 'kube-proxy' | 'cilium') => holdPatchCommands(kubectl, ds, component);
    expect(lines.slice(0, provisioned)).toEqual([
      // no CNI from minikube, containerd as on kind; minikube waits for its API server alone
      `minikube start -p ${P} --driver=docker --nodes=1 --cni=false --container-runtime=containerd --kubernetes-version=v1.35.1 --extra-config=kubeadm.pod-network-cidr=10.244.0.0/16 --wait=apiserver`,
      // the same chart and values as kind; the agent reaches the API server on the node's address
      expect.stringMatching(
        /^helm install cilium cilium --repo https:\/\/helm\.cilium\.io --version 1\.20\.0 .*--set kubeProxyReplacement=false --set bpf\.masquerade=true .*--set nodePort\.enabled=true --set bpf\.hostLegacyRouting=true --set k8sServiceHost=192\.168\.49\.2 --set k8sServicePort=8443 /,
      ),
      `${kubectl} -n kube-system rollout status daemonset/cilium --timeout=300s`,
      `${kubectl} wait --for=condition=Ready nodes --all --timeout=300s`,
      // kube-proxy first, then Cilium: Cilium's jump ends up on top, as startOrder [kube-proxy, cilium] has it
      ...patch('kube-proxy', 'kube-proxy'),
      ...patch('cilium', 'cilium'),
      `docker run -d --name ${HOST} --label netrepro.io/run=abc123 --network ${P} --entrypoint sleep nicolaka/netshoot:v0.13 infinity`,
      `docker run -d --name ${HOST}-agent --label netrepro.io/run=abc123 --network container:${HOST} -v ${AGENT}:/netrepro/pod-agent.mjs:ro --entrypoint sleep node:20-alpine infinity`,
      `docker run -d --name ${HOST}-serve-0 --label netrepro.io/run=abc123 --network container:${HOST} -v ${AGENT}:/netrepro/pod-agent.mjs:ro --entrypoint node node:20-alpine /netrepro/pod-agent.mjs http --port=80 --name=docs`,
      `docker logs ${HOST}-serve-0`,
      `docker inspect -f {{(index .NetworkSettings.Networks "${P}").IPAddress}} ${HOST}`,
      `${SSH} iptables-save`,
    ]);
    const get = (args: string[]) => `${kubectl} ${args.join(' ')}`;
    expect(lines.slice(provisioned, rebooted)).toEqual([
      get(CILIUM_PODS),
      get(KUBE_PROXY_PODS),
      get(WORKLOAD_PODS),
      // kube-proxy is kept off the node before it goes down...
      `${kubectl} label node ${P} --overwrite netrepro.io/hold-kube-proxy=true`,
      get(KUBE_PROXY_PODS),
      `docker restart ${P}`,
      // ...the node boots as minikube's start would bring it up: the control plane's alias, the kubelet, and
      // the API server's new host port in the run's kubeconfig
      `docker exec ${P} systemctl is-system-running --wait`,
      `docker ${INSPECT_P.join(' ')}`,
      ['docker', 'exec', P, ...controlPlaneAliasArgv('192.168.49.2')].join(' '),
      `docker exec ${P} systemctl start kubelet`,
      `minikube update-context -p ${P}`,
      // ...until Cilium is Ready there again
      get(CILIUM_PODS),
      get(CILIUM_PODS),
      `${kubectl} label node ${P} --overwrite netrepro.io/hold-kube-proxy-`,
      get(KUBE_PROXY_PODS),
      // kube-proxy synced its rules since the restart
      `minikube ${METRICS.join(' ')}`,
      `${kubectl} wait --for=condition=Ready node/${P} --timeout=180s`,
      get(WORKLOAD_PODS),
      `${SSH} iptables-save`,
    ]);
    expect(lines.slice(rebooted)).toEqual([
      `docker rm -f ${HOST}-serve-0 ${HOST}-agent ${HOST}`,
      `minikube delete -p ${P}`,
    ]);
  });

  it('starts kube-proxy by hand on a minikube node: its pod deleted, the replacement Ready, its rules synced since', async () => {
    const work = workDir();
    const f = fakes(
      `${work}/abc123/kubeconfig`,
      [
        { args: KUBE_PROXY_PODS, stdout: podList([kubeProxyPod('old')]), once: true },
        { args: KUBE_PROXY_PODS, stdout: podList([kubeProxyPod('new')]) },
      ],
      [
        ...hostReplies,
        { tool: 'minikube', args: BE_LIBERAL, stdout: '1\n' },
        { tool: 'minikube', args: METRICS, stdout: SYNCED },
      ],
    );
    const cluster = await provider(work).provision((await race()).topology, runContext());
    const before = f.lines().length;
    // be_liberal is on: v1.35's kube-proxy leaves the DROP out as 1.29 does
    await cluster.perform({ kind: 'start', node: 'node-a', component: 'kube-proxy', version: '1.29' });
    const kubectl = `kubectl --kubeconfig ${work}/abc123/kubeconfig --context ${P}`;
    expect(f.lines().slice(before)).toEqual([
      `minikube ${BE_LIBERAL.join(' ')}`,
      `${kubectl} ${KUBE_PROXY_PODS.join(' ')}`,
      `${kubectl} -n kube-system delete pod kube-proxy-old --wait=true --timeout=120s`,
      `${kubectl} ${KUBE_PROXY_PODS.join(' ')}`,
      `minikube ${METRICS.join(' ')}`,
    ]);
    await cluster.destroy();
  });

  it('refuses, before touching anything, a kube-proxy release it cannot stand for and a reboot it cannot order', async () => {
    const work = workDir();
    const f = fakes(
      `${work}/abc123/kubeconfig`,
      [],
      [...hostReplies, { tool: 'minikube', args: BE_LIBERAL, stdout: '0\n' }],
    );
    const cluster = await provider(work).provision((await race()).topology, runContext());
    const before = f.lines().length;
    // 1.14 writes no INVALID DROP and deletes the shared jump at start-up
    await expect(
      cluster.perform({ kind: 'start', node: 'node-a', component: 'kube-proxy', version: '1.14' }),
    ).rejects.toMatchObject({ code: 'UNSUPPORTED', message: expect.stringMatching(/cannot start as 1\.14 /) });
    expect(f.lines().slice(before)).toEqual([`minikube ${BE_LIBERAL.join(' ')}`]);
    await cluster.destroy();

    // on flannel nothing has the hold affinity: a reboot that starts flannel after kube-proxy is refused
    const t = topology({ cni: 'flannel', nodes: 1 });
    const flannel = fakes(
      `${work}/abc123/kubeconfig`,
      [],
      [
        {
          tool: 'minikube',
          args: ['ssh', '-p', P, '--node', P, '--', 'sudo', 'iptables-save'],
          stdout: kubeProxySave(t, 'node-a'),
        },
      ],
    );
    const plain = await provider(work).provision(t, runContext());
    const at = flannel.lines().length;
    await expect(
      plain.perform({ kind: 'reboot', node: 'node-a', order: ['kube-proxy', 'flannel'] }),
    ).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      message: expect.stringMatching(/starts flannel after kube-proxy needs flannel held off the node/),
    });
    expect(flannel.lines().slice(at)).toEqual([]);
    await plain.destroy();
  });

  it('a component that never gets Ready after the reboot is a clear error, and the hold is lifted', async () => {
    const work = workDir();
    const f = fakes(
      `${work}/abc123/kubeconfig`,
      [
        { args: CILIUM_PODS, stdout: podList([ciliumPod(['c1'])]), once: true },
        { args: KUBE_PROXY_PODS, stdout: podList([kubeProxyPod('old')]), once: true },
        { args: WORKLOAD_PODS, stdout: podList([]), once: true },
        { args: KUBE_PROXY_PODS, stdout: podList([]), once: true },
        // the agent's containers after the restart never pass readiness
        { args: CILIUM_PODS, stdout: podList([ciliumPod(['c2'], false)]) },
      ],
      [...hostReplies, BOOTED, { tool: 'docker', args: INSPECT_P, stdout: '192.168.49.2\n' }],
    );
    const cluster = await provider(work, 1200).provision((await race()).topology, runContext());
    const error = await cluster
      .perform({ kind: 'reboot', node: 'node-a', order: ['cilium', 'kube-proxy'] })
      .catch((e: Error) => e);
    expect(error).toMatchObject({
      code: 'LAB_FAILED',
      message: expect.stringMatching(
        /^cilium on node nr-abc123-cluster Ready again: not within 1\.2 s \(pods there: kube-system\/cilium-x not Ready\)$/,
      ),
    });
    const labels = f.lines().filter((l) => l.includes(' label node '));
    expect(labels).toEqual([
      expect.stringMatching(/ label node nr-abc123-cluster --overwrite netrepro\.io\/hold-kube-proxy=true$/),
      // lifted: kube-proxy was never let back, so the hold goes on the way out
      expect.stringMatching(/ label node nr-abc123-cluster --overwrite netrepro\.io\/hold-kube-proxy-$/),
    ]);
    expect(f.lines().filter((l) => l.startsWith('docker restart'))).toEqual([`docker restart ${P}`]);
    await cluster.destroy();
  });

  it('removes the host containers made so far when a server of the host cannot start, then the profile', async () => {
    const work = workDir();
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
    await expect(provider(work).provision((await race()).topology, runContext())).rejects.toThrow(
      /port is already allocated/,
    );
    expect(f.lines().slice(-2)).toEqual([
      `docker rm -f ${HOST}-serve-0 ${HOST}-agent ${HOST}`,
      `minikube delete -p ${P}`,
    ]);
  });
});

describe("a minikube node's reboot", () => {
  it('brings a worker back without touching the kubeconfig: its API server port does not move', async () => {
    const f = tools([
      { ...BOOTED, args: ['exec', `${P}-m02`, 'systemctl', 'is-system-running'] },
      { tool: 'docker', args: INSPECT_P, stdout: '192.168.49.2\n' },
    ]);
    await restartMinikubeNode({ profile: P, kubeconfig: '/tmp/kc', run: runContext() })(`${P}-m02`);
    expect(f.lines()).toEqual([
      `docker restart ${P}-m02`,
      `docker exec ${P}-m02 systemctl is-system-running --wait`,
      `docker ${INSPECT_P.join(' ')}`,
      ['docker', 'exec', `${P}-m02`, ...controlPlaneAliasArgv('192.168.49.2')].join(' '),
      `docker exec ${P}-m02 systemctl start kubelet`,
    ]);
  });

  it("refuses a container that is not the run's own", async () => {
    const f = tools([]);
    await expect(
      restartMinikubeNode({ profile: P, kubeconfig: '/tmp/kc', run: runContext() })('minikube'),
    ).rejects.toMatchObject({ code: 'ENVIRONMENT' });
    expect(f.lines()).toEqual([]);
  });
});
