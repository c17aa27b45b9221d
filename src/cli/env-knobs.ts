// Environment variables netrepro reads, shown in `netrepro --help`. A unit test checks that every
// NETREPRO_* name in the code is listed here.

export const ENV_KNOBS: readonly (readonly [name: string, meaning: string])[] = [
  [
    'NETREPRO_CACHE',
    'local and kind: where the one-time Kubernetes and kind builds are found (default ~/.cache/netrepro; npm run build:kubernetes, build:kind)',
  ],
  [
    'NETREPRO_K8S_VERSION',
    "Kubernetes version for kind/minikube/k3s (vMAJOR.MINOR.PATCH); a profile's real.kubernetesVersion wins",
  ],
  ['NETREPRO_CNI', 'real providers: run only scenarios of this CNI (bridge, flannel, cilium)'],
  ['NETREPRO_CILIUM_VERSION', 'Cilium Helm chart version'],
  ['NETREPRO_FLANNEL_VERSION', 'flannel release (its kube-flannel.yml)'],
  [
    'NETREPRO_CNI_PLUGINS_VERSION',
    'containernetworking/plugins release (another than the pinned one needs its sha256)',
  ],
  [
    'NETREPRO_CNI_PLUGINS_URL',
    'CNI plugins tarball fetched into nodes that lack the plugins (file:// is a path in the node); needs its sha256',
  ],
  ['NETREPRO_CNI_PLUGINS_SHA256', 'sha256 of that tarball, checked in the node before unpacking'],
  ['NETREPRO_KIND_NODE_IMAGE', 'kind node image (default kindest/node:<k8s version>)'],
  [
    'NETREPRO_KIND_ENGINE',
    "kind's Docker engine: host, private (one per cluster from npm run build:kind), auto (the host's where it has one)",
  ],
  ['NETREPRO_KIND_SRC', "npm run build:kind: a tree of kind's source at the pinned tag (copied into the cache once)"],
  ['NETREPRO_K3S_IMAGE', 'k3s image (default rancher/k3s:<k8s version>-k3s1)'],
  ['NETREPRO_PROBE_IMAGE', 'image of probe pods on real clusters'],
  ['NETREPRO_AGENT_IMAGE', 'image that runs the pod agent on real clusters'],
  ['NETREPRO_ALLOW_CONTEXT', 'kube contexts a run may touch although it did not create them (comma-separated)'],
  ['NETREPRO_WORK_DIR', 'where real-cluster runs keep kubeconfigs (default $TMPDIR/netrepro)'],
  [
    'NETREPRO_TRACE',
    '0: no packet trace per probe (no diagnosis, no early verdict at a drop); for measuring what tracing costs',
  ],
  [
    'NETREPRO_SPAWNER',
    '0: lab commands start through node:child_process, not the native spawner (agent/spawner.c); for comparing',
  ],
  ['NO_COLOR', 'non-empty: no colour'],
  ['FORCE_COLOR', '1/2/3/true: colour even when not a terminal; 0/false: no colour'],
  ['CI', 'set: plain progress lines instead of a spinner'],
  ['GITHUB_STEP_SUMMARY', 'set (GitHub Actions): `run` and `gate` append their Markdown summary to this file'],
  ['GITHUB_ACTIONS', 'true: `validate` also prints ::error annotations'],
];

export function envHelp(): string {
  const width = Math.max(...ENV_KNOBS.map(([name]) => name.length));
  return `\nEnvironment:\n${ENV_KNOBS.map(([name, meaning]) => `  ${name.padEnd(width)}  ${meaning}`).join('\n')}\n`;
}

/**
 * The knobs that say where files are or how this machine is reached, which a command reproducing a scenario
 * leaves to the reader's machine; every other NETREPRO_* knob changes what a run builds or how it judges, and
 * is repeated.
 */
const MACHINE_ONLY = new Set([
  'NETREPRO_CACHE',
  'NETREPRO_KIND_SRC',
  'NETREPRO_WORK_DIR',
  'NETREPRO_ALLOW_CONTEXT',
  'NETREPRO_SPAWNER',
]);

/** NAME=value, shell-quoted, for each reproducing knob set in `env`. */
export function reproducingEnv(env: NodeJS.ProcessEnv, quote: (s: string) => string): string[] {
  return ENV_KNOBS.map(([name]) => name)
    .filter((name) => name.startsWith('NETREPRO_') && !MACHINE_ONLY.has(name) && env[name])
    .map((name) => `${name}=${quote(env[name]!)}`);
}
