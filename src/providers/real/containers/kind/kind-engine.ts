// Which Docker engine and which kind a kind cluster runs on:
//   host:    the host's Docker (DOCKER_HOST, or /var/run/docker.sock), kind and kubectl on PATH, images from
//            registries, as a user's CI has them;
//   private: on a host without Docker, the kind build (`npm run build:kind`): an engine of the cluster's own
//            (private-docker.ts) with the build's node and pod images loaded, the build's kind and kubectl, and
//            the API server reached through a socket forwarded into the engine's network namespace.
// NETREPRO_KIND_ENGINE=host|private chooses outright.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TopologySpec } from '../../../../model/scenario-schema.ts';
import type { Misfit, RunContext } from '../../../../contract/provider.ts';
import { packagePath } from '../../../../model/package-root.ts';
import { HarnessError } from '../../../../model/errors.ts';
import { Daemon } from '../../common/daemon.ts';
import type { KubeAccess } from '../../common/kube-cli.ts';
import type { RealCluster } from '../../common/real-cluster.ts';
import type { ResolvedRealOptions } from '../../common/real-options.ts';
import { fitCni } from '../../common/scenario-fit.ts';
import type { WorkloadImages } from '../../common/workload-objects.ts';
import { HOST_DOCKER, type DockerEngine } from '../docker-engine.ts';
import { startPrivateDocker } from '../private-docker.ts';
import { findKindBuild, KIND_BUILD_HINT, type KindBuild } from './kind-build.ts';

export type KindMode = { engine: 'host' } | { engine: 'private'; build: KindBuild | undefined };

export function kindMode(options: Pick<ResolvedRealOptions, 'kindEngine'>): KindMode {
  if (options.kindEngine === 'host') return { engine: 'host' };
  if (options.kindEngine === 'private') return { engine: 'private', build: findKindBuild() };
  if (existsSync('/var/run/docker.sock')) return { engine: 'host' };
  const build = findKindBuild();
  return build ? { engine: 'private', build } : { engine: 'host' };
}

/** The node image's preloaded pod image runs everything: pods, hosts, the tcpdump/conntrack helpers. */
export function privateImages(build: KindBuild): WorkloadImages {
  return {
    probeImage: build.podImage,
    agentImage: build.podImage,
    agentCommand: ['/netrepro/pod-agent'],
    pullPolicy: 'Never',
  };
}

/** What the build cannot stand for: a shape whose install pulls from a registry, a release it has no node image of. */
export function privateMisfit(
  build: KindBuild,
  topology: TopologySpec,
  options: ResolvedRealOptions,
): Misfit | undefined {
  const fit = fitCni(topology, options);
  if ('cni' in fit && fit.cni !== 'bridge')
    return {
      reason: `kind on this host's own Docker engine has no registry: the ${fit.cni} shape pulls its images (the kind build serves the bridge shape)`,
      hint: 'run it where kind has a registry (the real-clusters workflow)',
    };
  if (options.k8sVersion !== build.kubernetesVersion)
    return {
      reason: `the kind build here has a node image of Kubernetes ${build.kubernetesVersion} only, not ${options.k8sVersion}`,
      hint: `--profile kube-proxy-1.20 or NETREPRO_K8S_VERSION=${build.kubernetesVersion}`,
    };
  return undefined;
}

export interface KindRuntime {
  engine: DockerEngine;
  kind: string;
  kubectl: string;
  /** Pods' images when not the options' (the private build's). */
  images?: WorkloadImages;
  /** The image of the tcpdump/conntrack helpers beside a node and of the hosts. */
  probeImage: string;
  nodeImage: string;
  /** The cluster's API access once `kind create` wrote the kubeconfig. */
  access(kubeconfig: string, context: string): Promise<KubeAccess>;
}

/** The engine the cluster runs on; a private one is started here and stopped by the cluster's teardown. */
export async function kindRuntime(
  mode: KindMode,
  options: ResolvedRealOptions,
  run: RunContext,
  cluster: RealCluster,
): Promise<KindRuntime> {
  if (mode.engine === 'host')
    return {
      engine: HOST_DOCKER,
      kind: 'kind',
      kubectl: 'kubectl',
      probeImage: options.probeImage,
      nodeImage: options.kindNodeImage,
      access: async (kubeconfig, context) => ({ kubeconfig, context }),
    };
  const build = mode.build;
  if (!build) throw new HarnessError('ENVIRONMENT', 'kind: no Docker on this host and no kind build', KIND_BUILD_HINT);
  const name = `${run.prefix}docker`;
  const t0 = Date.now();
  let stop: (() => Promise<void>) | undefined;
  cluster.onDestroy(`docker engine ${name}`, () => stop?.() ?? Promise.resolve());
  const engine = await startPrivateDocker({
    name,
    workDir: options.workDir,
    dockerRoot: build.dockerRoot,
    dataTemplate: build.dockerData,
    signal: run.signal,
    log: run.log,
  });
  stop = engine.stop;
  run.log(`docker engine ${name} up with the kind build's images in ${Date.now() - t0} ms`);
  return {
    engine,
    kind: build.kind,
    kubectl: build.kubectl,
    images: privateImages(build),
    probeImage: build.podImage,
    nodeImage: build.nodeImage,
    access: async (kubeconfig, context) => {
      const socket = join(engine.stateDir, 'apiserver.sock');
      const port = await apiServerPort(kubeconfig);
      const forwarder = new Daemon(
        'api-forwarder',
        [
          ...engine.enter,
          process.execPath,
          packagePath('src/providers/real/common/api-forwarder.mjs'),
          socket,
          '127.0.0.1',
          port,
        ],
        join(engine.stateDir, 'api-forwarder.log'),
      );
      cluster.onDestroy('api forwarder', () => forwarder.stop());
      await forwarder.waitForLine(/^ready /, 10_000, run.signal);
      return { kubeconfig, context, socket, netns: engine.netns, kubectl: build.kubectl };
    },
  };
}

/** The port kind published the API server on (its kubeconfig's https://127.0.0.1:PORT). */
async function apiServerPort(kubeconfig: string): Promise<string> {
  const server = /server:\s*https:\/\/127\.0\.0\.1:(\d+)/.exec(await readFile(kubeconfig, 'utf8'))?.[1];
  if (!server) throw new HarnessError('LAB_FAILED', `kind wrote no https://127.0.0.1:PORT server into ${kubeconfig}`);
  return server;
}
