// Where the `local` provider finds real Kubernetes: the one-time build of Debian's `kubernetes` source
// package (scripts/build-kubernetes.sh, `npm run build:kubernetes`), cached outside the checkout by source
// version under ${NETREPRO_CACHE:-~/.cache/netrepro}/kubernetes/<debian version>/. Nothing here builds.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheDir } from '../../../model/cache-dir.ts';

export const KUBE_BINARIES = [
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kubelet',
  'kube-proxy',
] as const;
export type KubeBinary = (typeof KUBE_BINARIES)[number];

export interface LocalBuild {
  dir: string;
  /** The Debian source version, e.g. 1.20.5+really1.20.2-1.1+deb12u1. */
  debianVersion: string;
  /** The upstream release the tree is, e.g. v1.20.2. */
  kubernetesVersion: string;
  bin(name: KubeBinary | 'kubectl'): string;
  images: { pauseTar: string; pauseRef: string; podTar: string; podRef: string };
}

export const cacheRoot = (env: NodeJS.ProcessEnv = process.env) => cacheDir(env, 'kubernetes');

/** The upstream version in a Debian version: 1.20.5+really1.20.2-1.1+deb12u1 -> v1.20.2. */
export function upstreamVersion(debianVersion: string): string {
  return `v${debianVersion.replace(/^.*really/, '').replace(/-[^-]*$/, '')}`;
}

/** A complete build (every binary and both images), the newest version first; undefined when there is none. */
export function findLocalBuild(env: NodeJS.ProcessEnv = process.env): LocalBuild | undefined {
  const root = cacheRoot(env);
  const versions = existsSync(root) ? readdirSync(root).sort().reverse() : [];
  for (const debianVersion of versions) {
    const dir = join(root, debianVersion);
    const bin = (name: string) => join(dir, 'bin', name);
    const img = (f: string) => join(dir, 'images', f);
    const complete =
      KUBE_BINARIES.every((b) => existsSync(bin(b))) &&
      ['pause.tar', 'pause.ref', 'pod.tar', 'pod.ref'].every((f) => existsSync(img(f)));
    if (!complete) continue;
    return {
      dir,
      debianVersion,
      kubernetesVersion: upstreamVersion(debianVersion),
      bin,
      images: {
        pauseTar: img('pause.tar'),
        pauseRef: readFileSync(img('pause.ref'), 'utf8').trim(),
        podTar: img('pod.tar'),
        podRef: readFileSync(img('pod.ref'), 'utf8').trim(),
      },
    };
  }
  return undefined;
}
