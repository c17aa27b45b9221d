// Where `--provider kind` finds what runs kind on a host without Docker: the one-time build of
// scripts/build-kind.sh (`npm run build:kind`), cached outside the checkout by kind version and Kubernetes
// source version under ${NETREPRO_CACHE:-~/.cache/netrepro}/kind/<kind version>+<debian version>/. Nothing
// here builds.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PINNED } from '../../common/real-options.ts';
import { cacheDir } from '../../../../model/cache-dir.ts';

export interface KindBuild {
  dir: string;
  /** The Kubernetes release of its node image, e.g. v1.20.2. */
  kubernetesVersion: string;
  kind: string;
  kubectl: string;
  /** Debian's docker.io unpacked. */
  dockerRoot: string;
  /** A Docker data root with the node and pod images loaded. */
  dockerData: string;
  /** The node image's and the pod image's names, both in the Docker data root. */
  nodeImage: string;
  podImage: string;
}

export const kindCacheRoot = (env: NodeJS.ProcessEnv = process.env) => cacheDir(env, 'kind');

/** A complete build of the pinned kind, the newest Kubernetes source version first; undefined when there is none. */
export function findKindBuild(env: NodeJS.ProcessEnv = process.env): KindBuild | undefined {
  const root = kindCacheRoot(env);
  const builds = existsSync(root)
    ? readdirSync(root)
        .filter((d) => d.startsWith(`${PINNED.kindVersion}+`))
        .sort()
        .reverse()
    : [];
  for (const name of builds) {
    const dir = join(root, name);
    if (!existsSync(join(dir, 'complete')) || !existsSync(join(dir, 'docker-data'))) continue;
    const nodeRef = readFileSync(join(dir, 'node.ref'), 'utf8').trim();
    return {
      dir,
      kubernetesVersion: nodeRef.slice(nodeRef.lastIndexOf(':') + 1),
      kind: join(dir, 'bin', 'kind'),
      kubectl: join(dir, 'bin', 'kubectl'),
      dockerRoot: join(dir, 'docker'),
      dockerData: join(dir, 'docker-data'),
      nodeImage: nodeRef,
      podImage: readFileSync(join(dir, 'pod.ref'), 'utf8').trim(),
    };
  }
  return undefined;
}

/** How a fresh machine gets the build: said where kind cannot run. */
export const KIND_BUILD_HINT =
  "npm run build:kind (needs kind's source at the pinned tag: NETREPRO_KIND_SRC=DIR, see docs/kind-build.md)";
