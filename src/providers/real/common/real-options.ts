// Real-cluster settings: in as the user shape (options object, then NETREPRO_* env), out fully
// resolved with pinned defaults. The only module of the real providers that reads process.env,
// so a candidate version is one variable away: NETREPRO_K8S_VERSION=v1.33.1 node bin/netrepro.js run ...
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HarnessError } from '../../../model/errors.ts';
import type { Profile } from '../../../model/profile.ts';

export const REAL_CNIS = ['bridge', 'flannel', 'cilium'] as const;
export type RealCni = (typeof REAL_CNIS)[number];

/**
 * Versions every run uses unless told otherwise, in one place: the defaults, the install hints and the
 * real-cluster workflow (a unit test holds .github/workflows/real-clusters.yml to them).
 */
export const PINNED = {
  // the newest release all three run: minikube 1.38.1 supports Kubernetes up to v1.35.1
  k8sVersion: 'v1.35.1',
  kindVersion: 'v0.32.0',
  minikubeVersion: '1.38.1',
  helmVersion: 'v3.21.4',
  ciliumChartVersion: '1.20.0',
  flannelVersion: 'v0.26.4',
  cniPluginsVersion: 'v1.6.2',
  // sha256 of cni-plugins-linux-<arch>-v1.6.2.tgz as published with the release; the same numbers are in
  // kubespray's roles/kubespray_defaults/vars/main/checksums.yml (cni_binary_checksums)
  cniPluginsSha256: {
    amd64: 'b8e811578fb66023f90d2e238d80cec3bdfca4b44049af74c374d4fae0f9c090',
    arm64: '01e0e22acc7f7004e4588c1fe1871cc86d7ab562cd858e1761c4641d89ebfaa4',
  },
  // probe pods: curl, nslookup, tcpdump, ip; agent containers: node for src/providers/netns/agent/pod-agent.mjs
  probeImage: 'nicolaka/netshoot:v0.13',
  agentImage: 'node:20-alpine',
} as const;

export interface RealClusterOptions {
  k8sVersion?: string;
  kindNodeImage?: string;
  k3sImage?: string;
  ciliumChartVersion?: string;
  flannelVersion?: string;
  cniPluginsVersion?: string;
  probeImage?: string;
  agentImage?: string;
  /** Run only scenarios of this CNI shape; the others are skipped with the reason. */
  cni?: RealCni;
  /** Kube contexts this run may touch although it did not create them. */
  allowContexts?: string[];
  /** Where run kubeconfigs go (never ~/.kube/config). */
  workDir?: string;
  /** kind's Docker engine: the host's, one of the cluster's own from the kind build, or (auto) the host's where it has one. */
  kindEngine?: KindEngine;
}

export const KIND_ENGINES = ['auto', 'host', 'private'] as const;
export type KindEngine = (typeof KIND_ENGINES)[number];

export interface ResolvedRealOptions {
  k8sVersion: string;
  kindNodeImage: string;
  k3sImage: string;
  ciliumChartVersion: string;
  flannelManifest: string;
  /** Where the reference CNI plugins are fetched from when a node lacks them, and the tarball's sha256. */
  cniPlugins: CniPluginsSource;
  probeImage: string;
  agentImage: string;
  cni: RealCni | undefined;
  allowContexts: string[];
  workDir: string;
  kindEngine: KindEngine;
}

export interface CniPluginsSource {
  url: string;
  sha256: string;
}

const VERSION = /^v\d+\.\d+\.\d+$/;
const SHA256 = /^[0-9a-f]{64}$/;

/**
 * NETREPRO_CNI_PLUGINS_URL (file:// is a path in the node) or the release of the version; the tarball's
 * sha256 from NETREPRO_CNI_PLUGINS_SHA256, else the pinned release's own. Any other tarball needs its checksum.
 */
function cniPluginsSource(version: string, env: NodeJS.ProcessEnv): CniPluginsSource {
  const arch = process.arch === 'arm64' ? 'arm64' : 'amd64';
  const custom = env.NETREPRO_CNI_PLUGINS_URL || undefined;
  const url =
    custom ??
    `https://github.com/containernetworking/plugins/releases/download/${version}/cni-plugins-linux-${arch}-${version}.tgz`;
  const given = env.NETREPRO_CNI_PLUGINS_SHA256 || undefined;
  if (given !== undefined && !SHA256.test(given))
    throw new HarnessError(
      'USAGE',
      `NETREPRO_CNI_PLUGINS_SHA256 ${given} is not a sha256 (64 lowercase hex digits)`,
      'sha256sum cni-plugins-linux-ARCH-VERSION.tgz prints it',
    );
  const sha256 = given ?? (!custom && version === PINNED.cniPluginsVersion ? PINNED.cniPluginsSha256[arch] : undefined);
  if (!sha256)
    throw new HarnessError(
      'USAGE',
      `no checksum for the CNI plugins tarball ${url}: only the pinned release (${PINNED.cniPluginsVersion}) has a known one`,
      'set NETREPRO_CNI_PLUGINS_SHA256 to the sha256 of that tarball',
    );
  return { url, sha256 };
}

/**
 * Options first, then the profile's `real` versions, then NETREPRO_* variables, then the pinned defaults.
 * A profile wins over the environment: the gate compares two profiles, and an ambient variable must not
 * make both sides run the same release (node images follow the profile's Kubernetes version too).
 */
export function resolveRealOptions(
  input: RealClusterOptions = {},
  env: NodeJS.ProcessEnv = process.env,
  profile?: Profile['real'],
): ResolvedRealOptions {
  const pick = (value: string | undefined, name: string) => value ?? (env[name] || undefined);
  const fromProfile = (value: string | undefined, name: string) =>
    value ?? (profile?.kubernetesVersion ? undefined : env[name] || undefined);
  const k8sVersion =
    input.k8sVersion ?? profile?.kubernetesVersion ?? pick(undefined, 'NETREPRO_K8S_VERSION') ?? PINNED.k8sVersion;
  if (!VERSION.test(k8sVersion))
    throw new HarnessError(
      'USAGE',
      `Kubernetes version ${k8sVersion} is not vMAJOR.MINOR.PATCH`,
      'e.g. NETREPRO_K8S_VERSION=v1.35.1',
    );
  const cni = pick(input.cni, 'NETREPRO_CNI');
  if (cni !== undefined && !(REAL_CNIS as readonly string[]).includes(cni)) {
    throw new HarnessError('USAGE', `unknown CNI ${cni}`, `NETREPRO_CNI is one of: ${REAL_CNIS.join(', ')}`);
  }
  // a DOCKER_HOST the user set names the engine to use
  const kindEngine = pick(input.kindEngine, 'NETREPRO_KIND_ENGINE') ?? (env.DOCKER_HOST ? 'host' : 'auto');
  if (!(KIND_ENGINES as readonly string[]).includes(kindEngine))
    throw new HarnessError(
      'USAGE',
      `unknown kind engine ${kindEngine}`,
      `NETREPRO_KIND_ENGINE is one of: ${KIND_ENGINES.join(', ')}`,
    );
  const flannelVersion =
    input.flannelVersion ?? profile?.flannel ?? pick(undefined, 'NETREPRO_FLANNEL_VERSION') ?? PINNED.flannelVersion;
  const cniPluginsVersion = pick(input.cniPluginsVersion, 'NETREPRO_CNI_PLUGINS_VERSION') ?? PINNED.cniPluginsVersion;
  return {
    k8sVersion,
    kindNodeImage: fromProfile(input.kindNodeImage, 'NETREPRO_KIND_NODE_IMAGE') ?? `kindest/node:${k8sVersion}`,
    k3sImage: fromProfile(input.k3sImage, 'NETREPRO_K3S_IMAGE') ?? `rancher/k3s:${k8sVersion}-k3s1`,
    ciliumChartVersion:
      input.ciliumChartVersion ??
      profile?.ciliumChart ??
      pick(undefined, 'NETREPRO_CILIUM_VERSION') ??
      PINNED.ciliumChartVersion,
    flannelManifest: `https://github.com/flannel-io/flannel/releases/download/${flannelVersion}/kube-flannel.yml`,
    cniPlugins: cniPluginsSource(cniPluginsVersion, env),
    probeImage: pick(input.probeImage, 'NETREPRO_PROBE_IMAGE') ?? PINNED.probeImage,
    agentImage: pick(input.agentImage, 'NETREPRO_AGENT_IMAGE') ?? PINNED.agentImage,
    cni: cni as RealCni | undefined,
    allowContexts:
      input.allowContexts ??
      (env.NETREPRO_ALLOW_CONTEXT ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    workDir: input.workDir ?? env.NETREPRO_WORK_DIR ?? join(tmpdir(), 'netrepro'),
    kindEngine: kindEngine as KindEngine,
  };
}

/** Already resolved options pass through; the user shape is resolved (with the environment). */
export function asResolved(options: RealClusterOptions | ResolvedRealOptions): ResolvedRealOptions {
  return 'flannelManifest' in options ? options : resolveRealOptions(options);
}

/** The providers that run real Kubernetes: `local` on this host from the one-time build, the others through their CLIs. */
export type RealProviderName = 'local' | 'kind' | 'minikube' | 'k3s';
