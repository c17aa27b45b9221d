// Fault injection changes node kernels: nothing outside what the run created is touched unless allowed.
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { KindProvider } from '../../src/providers/real/containers/kind/kind-provider.ts';
import { assertOwnedName } from '../../src/providers/real/common/context-guard.ts';
import { detectTools } from '../../src/providers/real/containers/cli-tools.ts';
import { KubeCli } from '../../src/providers/real/common/kube-cli.ts';
import { destroyAfterFailure, guardedKube } from '../../src/providers/real/common/provision-steps.ts';
import { RealCluster } from '../../src/providers/real/common/real-cluster.ts';
import { resolveRealOptions } from '../../src/providers/real/common/real-options.ts';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAKES, fakeTools, recordingKubeApi, runContext } from './fake-env.ts';

let fakes: ReturnType<typeof fakeTools> | undefined;
afterEach(() => fakes?.restore());

describe('context allowlist', () => {
  const guard = { created: 'kind-nr-abc123-cluster', allowContexts: [] };

  it('refuses a context the run did not create, before running anything, and says how to allow it', async () => {
    fakes = fakeTools();
    const cli = new KubeCli({ kubeconfig: '/home/me/.kube/config', context: 'prod-eu-1' }, guard);
    await expect(cli.kubectl(['get', 'nodes'])).rejects.toMatchObject({
      code: 'ENVIRONMENT',
      message:
        'refusing to touch kube context "prod-eu-1": this run created "kind-nr-abc123-cluster", and fault injection changes node kernels',
      hint: expect.stringContaining('NETREPRO_ALLOW_CONTEXT=prod-eu-1'),
    });
    await expect(cli.helm(['list'])).rejects.toThrow(/refusing to touch kube context/);
    expect(fakes.lines()).toEqual([]);
  });

  it('allows a context named in NETREPRO_ALLOW_CONTEXT', async () => {
    fakes = fakeTools();
    const { allowContexts } = resolveRealOptions({}, { NETREPRO_ALLOW_CONTEXT: 'staging, prod-eu-1' });
    await new KubeCli({ kubeconfig: 'k', context: 'prod-eu-1' }, { ...guard, allowContexts }).kubectl(['get', 'nodes']);
    expect(fakes.lines()).toEqual(['kubectl --kubeconfig k --context prod-eu-1 get nodes']);
  });

  it('refuses, and tears down, when a provider ends up on a foreign context', async () => {
    fakes = fakeTools();
    const { factory, api } = recordingKubeApi([]);
    const torn: string[] = [];
    const run = runContext();
    const kube = guardedKube('kind-nr-abc123-cluster', resolveRealOptions({ workDir: fakes.dir }), factory);
    const cluster = new RealCluster([], run);
    const provisioned = (async () => {
      try {
        cluster.onDestroy('cluster', async () => torn.push('cluster'));
        kube.api({ kubeconfig: 'k', context: 'docker-desktop' });
      } catch (e) {
        await destroyAfterFailure(cluster, run);
        throw e;
      }
    })();
    await expect(provisioned).rejects.toThrow(/refusing to touch kube context "docker-desktop"/);
    expect(() => kube.cli({ kubeconfig: 'k', context: 'docker-desktop' })).toThrow(/refusing to touch kube context/);
    expect(torn).toEqual(['cluster']);
    expect(api.accesses).toEqual([]);
  });

  it('never execs into a node container without the run prefix', () => {
    expect(() => assertOwnedName('kind-control-plane', 'nr-abc123-', 'node container')).toThrow(
      /does not carry this run's prefix nr-abc123-/,
    );
  });
});

describe('detect', () => {
  it('names everything missing, with how to install it', async () => {
    const only = mkdtempSync(join(tmpdir(), 'netrepro-path-'));
    onTestFinished(() => rmSync(only, { recursive: true, force: true }));
    symlinkSync(join(FAKES, 'fake-cli.sh'), join(only, 'docker'));
    fakes = fakeTools(
      [
        {
          tool: 'docker',
          args: ['info'],
          exitCode: 1,
          stderr: 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?\n',
        },
      ],
      only,
    );
    expect(await new KindProvider().detect()).toEqual({
      ok: false,
      reason:
        'kind needs: the Docker daemon is not reachable (`docker info`: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?); kind is not on PATH; kubectl is not on PATH',
      hint: "start Docker (e.g. `sudo systemctl start docker`) or point DOCKER_HOST at a running engine; install kind v0.32.0: https://kind.sigs.k8s.io/docs/user/quick-start/#installation; install kubectl v1.35: https://kubernetes.io/docs/tasks/tools/#kubectl; or, without Docker: npm run build:kind (needs kind's source at the pinned tag: NETREPRO_KIND_SRC=DIR, see docs/kind-build.md)",
    });
  });

  it('is ok when the tools are there and the daemon answers', async () => {
    fakes = fakeTools([{ tool: 'docker', args: ['info'], stdout: '27.5.1\n' }]);
    expect(await detectTools('minikube', ['docker', 'minikube', 'kubectl', 'helm'])).toEqual({ ok: true });
  });
});
