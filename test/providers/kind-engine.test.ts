// Which engine a kind cluster runs on, and what the kind build can stand for: decided from the options and the
// build in the cache, before anything starts. The engine itself runs in test/real/kind-*.test.ts.
import { existsSync, mkdirSync, mkdtempSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveRealOptions } from '../../src/providers/real/common/real-options.ts';
import { findKindBuild } from '../../src/providers/real/containers/kind/kind-build.ts';
import { kindMode, privateMisfit } from '../../src/providers/real/containers/kind/kind-engine.ts';
import { KindProvider } from '../../src/providers/real/containers/kind/kind-provider.ts';
import { missingCapabilities } from '../../src/providers/real/containers/private-docker.ts';
import { topology } from './fake-env.ts';

let cache: string;
let saved: string | undefined;
beforeEach(() => {
  cache = mkdtempSync(join(tmpdir(), 'netrepro-kind-cache-'));
  saved = process.env.NETREPRO_CACHE;
  process.env.NETREPRO_CACHE = cache;
});
afterEach(() => {
  if (saved === undefined) delete process.env.NETREPRO_CACHE;
  else process.env.NETREPRO_CACHE = saved;
  rmSync(cache, { recursive: true, force: true });
});

/** A finished build in the cache, as scripts/build-kind.sh leaves it. */
function fakeBuild() {
  const dir = join(cache, 'kind', 'v0.32.0+1.20.5+really1.20.2-1.1+deb12u1');
  mkdirSync(join(dir, 'docker-data'), { recursive: true });
  writeFileSync(join(dir, 'node.ref'), 'localhost/netrepro/kind-node:v1.20.2\n');
  writeFileSync(join(dir, 'pod.ref'), 'localhost/netrepro/pod:0123abcd\n');
  writeFileSync(join(dir, 'complete'), '');
  return dir;
}
const options = (env: Record<string, string>) => resolveRealOptions({}, { NETREPRO_K8S_VERSION: 'v1.20.2', ...env });

describe('the kind build and the engine a cluster runs on', () => {
  it('finds a finished build only, with its images and the release of its node image', () => {
    expect(findKindBuild()).toBeUndefined();
    const dir = fakeBuild();
    rmSync(join(dir, 'complete'));
    expect(findKindBuild()).toBeUndefined(); // a build cut short
    writeFileSync(join(dir, 'complete'), '');
    expect(findKindBuild()).toMatchObject({
      kubernetesVersion: 'v1.20.2',
      kind: join(dir, 'bin', 'kind'),
      nodeImage: 'localhost/netrepro/kind-node:v1.20.2',
      podImage: 'localhost/netrepro/pod:0123abcd',
    });
  });

  it("takes the host's Docker when DOCKER_HOST names one or it is asked for, the build's engine when asked", () => {
    fakeBuild();
    expect(kindMode(options({ DOCKER_HOST: 'tcp://127.0.0.1:2375' })).engine).toBe('host');
    expect(kindMode(options({ NETREPRO_KIND_ENGINE: 'host' })).engine).toBe('host');
    expect(kindMode(options({ NETREPRO_KIND_ENGINE: 'private' }))).toMatchObject({ engine: 'private', build: {} });
    expect(() => options({ NETREPRO_KIND_ENGINE: 'podman' })).toThrow(/unknown kind engine podman/);
  });

  it('says how to get the build where there is none, and needs root for its namespaces', async () => {
    const provider = new KindProvider(options({ NETREPRO_KIND_ENGINE: 'private' }));
    expect(await provider.detect()).toEqual({
      ok: false,
      reason: 'kind: no Docker on this host and no kind build',
      hint: "npm run build:kind (needs kind's source at the pinned tag: NETREPRO_KIND_SRC=DIR, see docs/kind-build.md)",
    });
    fakeBuild();
    const built = new KindProvider(options({ NETREPRO_KIND_ENGINE: 'private' }));
    expect((await built.detect()).ok).toBe(process.getuid?.() === 0);
  });

  it("stands for the bridge shape at the build's release, and says why not for the others", () => {
    fakeBuild();
    const build = findKindBuild()!;
    const o = options({ NETREPRO_KIND_ENGINE: 'private' });
    expect(privateMisfit(build, topology({ cni: 'bridge', nodes: 2 }), o)).toBeUndefined();
    expect(privateMisfit(build, topology({ cni: 'cilium', nodes: 1 }), o)?.reason).toBe(
      "kind on this host's own Docker engine has no registry: the cilium shape pulls its images (the kind build serves the bridge shape)",
    );
    const flannel = resolveRealOptions({}, { NETREPRO_K8S_VERSION: 'v1.20.2', NETREPRO_CNI: 'flannel' });
    expect(privateMisfit(build, topology({ cni: 'bridge', nodes: 1 }), flannel)?.reason).toMatch(/the flannel shape/);
    const newer = resolveRealOptions({}, {});
    expect(privateMisfit(build, topology({ cni: 'bridge', nodes: 1 }), newer)).toEqual({
      reason: 'the kind build here has a node image of Kubernetes v1.20.2 only, not v1.35.1',
      hint: '--profile kube-proxy-1.20 or NETREPRO_K8S_VERSION=v1.20.2',
    });
    // the provider refuses before anything starts
    const provider = new KindProvider(resolveRealOptions({}, { NETREPRO_KIND_ENGINE: 'private' }));
    expect(provider.fit(topology({ cni: 'bridge', nodes: 1 }))?.reason).toMatch(/v1.20.2 only/);
  });

  it('reads which capabilities the bounding set lacks (the runtime filter is used only then)', async () => {
    const missing = await missingCapabilities();
    expect(missing.every((c) => Number.isInteger(c) && c >= 0 && c < 64)).toBe(true);
    // this process's own set: CapBnd bit by bit
    const status = (await import('node:fs')).readFileSync('/proc/self/status', 'utf8');
    const bnd = BigInt(`0x${/^CapBnd:\s*([0-9a-f]+)/m.exec(status)![1]}`);
    for (const c of missing) expect((bnd >> BigInt(c)) & 1n).toBe(0n);
  });
});

describe('netrepro clean and private engines', () => {
  it('reaps an engine of its own work directory whose run is over, and never one of another work directory', async () => {
    const { PRIVATE_DOCKER_ROOT, reapPrivateDockers } = await import(
      '../../src/providers/real/containers/private-docker.ts'
    );
    const { newRunId } = await import('../../src/contract/run-id.ts');
    const mine = `nr-${newRunId()}-docker`;
    const theirs = `nr-${newRunId()}-docker`;
    const work = join(cache, 'work');
    for (const [name, owner] of [
      [mine, work],
      [theirs, join(cache, 'another-work')],
    ] as const) {
      mkdirSync(join(PRIVATE_DOCKER_ROOT, name), { recursive: true });
      writeFileSync(join(PRIVATE_DOCKER_ROOT, name, 'work-dir'), owner);
    }
    try {
      // `true` stands for the engine's docker CLI: the engine answers, with no container
      const removed = await reapPrivateDockers('true', work, async () => true);
      expect(removed).toEqual([`docker engine ${mine}`]);
      expect(existsSync(join(PRIVATE_DOCKER_ROOT, mine))).toBe(false);
      expect(existsSync(join(PRIVATE_DOCKER_ROOT, theirs))).toBe(true);
    } finally {
      rmSync(join(PRIVATE_DOCKER_ROOT, theirs), { recursive: true, force: true });
      try {
        rmdirSync(PRIVATE_DOCKER_ROOT); // only when no engine of a real run is there
      } catch {}
    }
  });
});
