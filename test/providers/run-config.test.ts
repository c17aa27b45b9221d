// One resolved run configuration reaches the real providers: a gate under two profiles whose `real`
// versions differ creates its clusters with different Kubernetes releases (recorded by the fake CLIs).
import { runProcess } from '../child-process.ts';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createProvider, providerSupport } from '../../src/providers/create-provider.ts';
import { resolveRunConfig } from '../../src/providers/run-config.ts';
import { runGate } from '../../src/engine/gate/run-gate.ts';
import { loadScenarioFile } from '../../src/model/load-scenario.ts';
import { loadProfile, type Profile } from '../../src/model/profile.ts';
import { FAKES, fakeTools, kubeProxySave, recordingKubeApi } from './fake-env.ts';

const SCENARIO = 'scenarios/br-netfilter-clusterip-same-node.yaml';
let fakes: ReturnType<typeof fakeTools> | undefined;
afterEach(() => fakes?.restore());

/** Runs the gate on the fakes; the recorded calls, run ids replaced by RUN and the work dir by WORK. */
async function gateOn(provider: 'kind' | 'minikube', baseline: Profile, candidate: Profile) {
  const loaded = await loadScenarioFile(SCENARIO);
  // minikube's node reads answer with kube-proxy holding the scenario's endpoints, in the lab's own namespaces
  fakes = fakeTools([{ tool: 'minikube', args: ['ssh'] }]);
  const work = `${fakes.dir}/work`;
  const configs: string[] = [];
  const result = await runGate([loaded], baseline, candidate, {
    signal: new AbortController().signal,
    provider: async (profile) => {
      // the fakes stand for the host's Docker (a kind build on this machine would pick its own engine)
      const config = resolveRunConfig({ provider, profile }, { NETREPRO_WORK_DIR: work, NETREPRO_KIND_ENGINE: 'host' });
      configs.push(`${profile.name}: ${config.real.k8sVersion} ${config.real.kindNodeImage}`);
      const { api, factory } = recordingKubeApi([{ name: 'n', internalIP: '172.18.0.2', podCIDR: '10.244.1.0/24' }]);
      const createNamespace = api.createNamespace;
      api.createNamespace = (body) => {
        const prefix = /^nr-[0-9a-f]+-/.exec(body.metadata!.name!)![0];
        fakes!.reply(0, kubeProxySave(loaded.scenario.topology, 'node-a', { prefix }));
        return createNamespace(body);
      };
      return createProvider(config, { kubeApi: factory });
    },
  });
  const norm = (s: string) =>
    s
      .replaceAll(work, 'WORK')
      .replace(/nr-[0-9a-f]{6}-/g, 'nr-RUN-')
      .replace(/\/[0-9a-f]{6}\//g, '/RUN/');
  return {
    result,
    configs,
    calls: fakes
      .calls()
      .map((c) => ({ line: norm([c.tool, ...c.argv].join(' ')), config: c.config && norm(c.config) })),
  };
}

describe('profile.real reaches the real providers', () => {
  it('kind: each profile creates its cluster from the node image of its Kubernetes version', async () => {
    const { calls, configs } = await gateOn(
      'kind',
      await loadProfile('kube-proxy-1.15'),
      await loadProfile('kube-proxy-1.29'),
    );
    expect(configs).toEqual([
      'kube-proxy-1.15: v1.15.12 kindest/node:v1.15.12',
      'kube-proxy-1.29: v1.29.14 kindest/node:v1.29.14',
    ]);
    const creates = calls.filter((c) => c.line.startsWith('kind create cluster'));
    expect(creates).toHaveLength(2);
    expect(creates.map((c) => c.config!.match(/image: (\S+)/g))).toEqual([
      ['image: kindest/node:v1.15.12'],
      ['image: kindest/node:v1.29.14'],
    ]);
    // and each cluster is deleted again
    expect(calls.filter((c) => c.line.startsWith('kind delete cluster'))).toHaveLength(2);
  });

  it('minikube: --kubernetes-version follows the profile', async () => {
    const { calls } = await gateOn(
      'minikube',
      await loadProfile('kube-proxy-1.29'),
      await loadProfile('kube-proxy-1.15'),
    );
    const starts = calls.filter((c) => c.line.startsWith('minikube start'));
    expect(starts.map((c) => c.line.match(/--kubernetes-version=\S+/)![0])).toEqual([
      '--kubernetes-version=v1.29.14',
      '--kubernetes-version=v1.15.12',
    ]);
  });

  it('a profile wins over NETREPRO_* variables; options win over both; without a profile the variables hold', async () => {
    const env = {
      NETREPRO_K8S_VERSION: 'v1.31.0',
      NETREPRO_KIND_NODE_IMAGE: 'mirror/kind-node:custom',
      NETREPRO_CILIUM_VERSION: '1.16.0',
    };
    const profile: Profile = {
      name: 'p',
      description: 'p',
      nodeSysctls: {},
      real: { kubernetesVersion: 'v1.29.14', ciliumChart: '1.15.3', flannel: 'v0.25.0' },
    };
    const withProfile = resolveRunConfig({ provider: 'kind', profile }, env).real;
    expect([
      withProfile.k8sVersion,
      withProfile.kindNodeImage,
      withProfile.k3sImage,
      withProfile.ciliumChartVersion,
      withProfile.flannelManifest,
    ]).toEqual([
      'v1.29.14',
      'kindest/node:v1.29.14',
      'rancher/k3s:v1.29.14-k3s1',
      '1.15.3',
      'https://github.com/flannel-io/flannel/releases/download/v0.25.0/kube-flannel.yml',
    ]);
    const envOnly = resolveRunConfig({ provider: 'kind' }, env).real;
    expect([envOnly.k8sVersion, envOnly.kindNodeImage, envOnly.ciliumChartVersion]).toEqual([
      'v1.31.0',
      'mirror/kind-node:custom',
      '1.16.0',
    ]);
    expect(resolveRunConfig({ provider: 'kind', profile, real: { k8sVersion: 'v1.30.0' } }, env).real.k8sVersion).toBe(
      'v1.30.0',
    );
    expect(() =>
      resolveRunConfig({ provider: 'kind', profile: { ...profile, real: { kubernetesVersion: '1.29' } } }, {}),
    ).toThrow(/not vMAJOR.MINOR.PATCH/);
    expect(() => resolveRunConfig({ provider: 'docker' })).toThrow(/unknown provider docker/);
  });

  it("the profile's version decides the kube-proxy fit before anything is created", async () => {
    const { scenario } = await loadScenarioFile(SCENARIO);
    const config = resolveRunConfig(
      {
        provider: 'kind',
        profile: { name: 'old', description: 'old', nodeSysctls: {}, real: { kubernetesVersion: 'v1.14.10' } },
      },
      {},
    );
    // the scenario's kube-proxy 1.29 drops INVALID; a 1.14 cluster would not
    expect(providerSupport(config).fit(scenario.topology)?.reason).toMatch(
      /kube-proxy profile 1\.29 needs .*\(1\.29 or later\).*would run v1\.14\.10/,
    );
  });
});

describe('a scenario kind cannot run', () => {
  it('`run --provider kind` skips it at once: nothing but detect reaches the CLIs', async () => {
    fakes = fakeTools();
    const root = join(import.meta.dirname, '../..');
    const r = await runProcess(
      'node',
      ['bin/netrepro.js', 'run', '--provider', 'kind', 'stale-sock-lb-program', '--json', `${fakes.dir}/report.json`],
      {
        cwd: root,
        // the fakes first on PATH, then node's own directory only
        env: { ...process.env, PATH: `${FAKES}:${dirname(process.execPath)}`, NETREPRO_WORK_DIR: `${fakes.dir}/work` },
      },
    );
    expect(r.exitCode).toBe(0);
    expect(fakes.lines()).toEqual(['docker info --format {{.ServerVersion}}']);
    const report = JSON.parse(readFileSync(`${fakes.dir}/report.json`, 'utf8'));
    expect(report.scenarios[0]).toMatchObject({ id: 'stale-sock-lb-program', verdict: 'skipped', labs: [] });
    expect(report.scenarios[0].skipReason).toMatch(/^kind cannot attach a BPF socket-LB program/);
  });
});
