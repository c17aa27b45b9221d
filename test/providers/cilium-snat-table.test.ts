import { describe, expect, it } from 'vitest';
import type { StartedCluster } from '../../src/contract/provider.ts';
import { loadScenarioFile } from '../../src/model/load-scenario.ts';
import { packagePath } from '../../src/model/package-root.ts';
import { placeholderResolver } from '../../src/model/placeholders.ts';
import { PhaseChecks } from '../../src/observe/expect/run-checks.ts';
import { KindProvider } from '../../src/providers/real/containers/kind/kind-provider.ts';
import { ciliumPod, nodePodsQuery, podList } from './component-pods.ts';
import { recordedRun, recordingKubeApi, runContext } from './fake-env.ts';

const CP = 'nr-abc123-cluster-control-plane';
const WORKER = 'nr-abc123-cluster-worker';
const CTX = 'kind-nr-abc123-cluster';
const CILIUM_PODS = nodePodsQuery(CP, 'k8s-app=cilium');
const NAT_LIST = [
  '-n',
  'kube-system',
  'exec',
  'cilium-x',
  '-c',
  'cilium-agent',
  '--',
  'cilium-dbg',
  'bpf',
  'nat',
  'list',
];

/**
 * `cilium-dbg bpf nat list` as v1.20.0-pre.0 prints it (pkg/tuple/ipv4.go TupleKey4Global.Dump, then
 * pkg/maps/nat/ipv4.go NatEntry4.Dump): the client 10.244.0.5 to docs 172.18.0.9:80, SNATed to node-a's
 * 172.18.0.2, and the coredns pod's flow to the docker DNS beside it. `before` holds the client's flow of an
 * earlier phase only.
 */
const table = (phase: 'before' | 'after') =>
  [
    'TCP OUT 10.244.0.5:40112 -> 172.18.0.9:80 XLATE_SRC 172.18.0.2:40112 Created=41sec ago NeedsCT=1',
    'TCP IN 172.18.0.9:80 -> 172.18.0.2:40112 XLATE_DST 10.244.0.5:40112 Created=41sec ago NeedsCT=1',
    'UDP IN 172.18.0.1:53 -> 172.18.0.2:51012 XLATE_DST 10.244.0.3:51012 Created=3sec ago NeedsCT=1',
    ...(phase === 'after'
      ? [
          'TCP OUT 10.244.0.5:40180 -> 172.18.0.9:80 XLATE_SRC 172.18.0.2:40180 Created=1sec ago NeedsCT=1',
          'TCP IN 172.18.0.9:80 -> 172.18.0.2:40180 XLATE_DST 10.244.0.5:40180 Created=1sec ago NeedsCT=1',
        ]
      : []),
    '',
  ].join('\n');

const { workDir, tools } = recordedRun(CTX);

async function provisionCrossNode(work: string) {
  const { scenario } = await loadScenarioFile(packagePath('scenarios/cilium-forward-race-cross-node.yaml'));
  const { api, factory } = recordingKubeApi([
    { name: CP, internalIP: '172.18.0.2', podCIDR: '10.244.0.0/24', kubeletVersion: 'v1.35.1' },
    { name: WORKER, internalIP: '172.18.0.3', podCIDR: '10.244.1.0/24', kubeletVersion: 'v1.35.1' },
  ]);
  const cluster = await new KindProvider({ workDir: work }, { kubeApi: factory }).provision(
    scenario.topology,
    runContext(),
  );
  return { scenario, cluster, api };
}

describe('the snat check on kind/cilium', () => {
  it('installs Cilium with native routing over the scenario clusterCIDR, then reads node-a through its agent', async () => {
    const work = workDir('netrepro-kind-work-');
    const kubeconfig = `${work}/abc123/kubeconfig`;
    const kc = (args: string[]) => ['--kubeconfig', kubeconfig, '--context', CTX, ...args];
    const f = tools([
      { tool: 'docker', args: ['logs'], stdout: 'ready http 80\n' },
      { tool: 'docker', args: ['inspect'], stdout: '172.18.0.9\n' },
      { tool: 'kubectl', args: kc(CILIUM_PODS), stdout: podList([cilium()]) },
      { tool: 'kubectl', args: kc(NAT_LIST), stdout: table('before'), once: true },
      { tool: 'kubectl', args: kc(NAT_LIST), stdout: table('after'), once: true },
    ]);
    const { scenario, cluster } = await provisionCrossNode(work);
    (cluster as unknown as { addresses: Map<string, string> }).addresses.set('pod/client', '10.244.0.5');
    const helm = f.lines().find((l) => l.startsWith('helm install cilium '));
    expect(helm).toMatch(
      / --set routingMode=native --set autoDirectNodeRoutes=true --set ipv4NativeRoutingCIDR=10\.244\.0\.0\/16 /,
    );

    const checks = new PhaseChecks(
      scenario.baseline.checks.filter((c) => c.id === 'snat-flows'),
      cluster,
      placeholderResolver(cluster as StartedCluster),
    );
    const start = f.lines().length;
    await checks.start();
    const [result] = await checks.finish();
    const read = f.lines().slice(start);
    await cluster.destroy();

    const kubectl = `kubectl --kubeconfig ${kubeconfig} --context ${CTX}`;
    expect(read).toEqual([
      `${kubectl} ${CILIUM_PODS.join(' ')}`,
      `${kubectl} ${NAT_LIST.join(' ')}`,
      `${kubectl} ${CILIUM_PODS.join(' ')}`,
      `${kubectl} ${NAT_LIST.join(' ')}`,
    ]);
    expect(result).toMatchObject({
      id: 'snat-flows',
      argv: ['cilium-dbg', 'bpf', 'nat', 'list'],
      matched: true,
      value: 1,
      observed: '1 added (1 -> 2 entries of the flow)',
      evidence: ['TCP IN 172.18.0.9:80 -> 172.18.0.2:40180 XLATE_DST 10.244.0.5:40180 Created=1sec ago NeedsCT=1'],
    });
  });

  it('is unreadable, not zero, when node-a has no cilium pod', async () => {
    const work = workDir('netrepro-kind-work-');
    const kubeconfig = `${work}/abc123/kubeconfig`;
    tools([
      { tool: 'docker', args: ['logs'], stdout: 'ready http 80\n' },
      { tool: 'docker', args: ['inspect'], stdout: '172.18.0.9\n' },
      { tool: 'kubectl', args: ['--kubeconfig', kubeconfig, '--context', CTX, ...CILIUM_PODS], stdout: podList([]) },
    ]);
    const { scenario, cluster } = await provisionCrossNode(work);
    const checks = new PhaseChecks(
      scenario.baseline.checks.filter((c) => c.id === 'snat-flows'),
      cluster,
      placeholderResolver(cluster as StartedCluster),
    );
    await checks.start();
    const [result] = await checks.finish();
    await cluster.destroy();
    expect(result).toMatchObject({
      matched: false,
      unreadable: true,
      observed: `cannot be read before the probes: no cilium pod on node ${CP} to read its BPF maps`,
    });
  });
});

const cilium = () => ciliumPod(['c1']);
