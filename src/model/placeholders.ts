// Commands in scenario files: argv (a string is split on spaces, honouring quotes; never a shell) with
// placeholders resolved per lab. Check patterns (and a step's `expect.prints`) take them too, as regex text.
//   {pod/web} {svc/x} {node/x} {host/x}  addresses
//   {ns/default}                         the namespace as the cluster names it (a real cluster's is the run's own)
//   {cgroup/NODE} {bpffs/NODE}           lab paths of a node's pod cgroup and bpffs pin directory
//   {veth/POD}                           the pod's host-side interface
//   {port/NODE}                          the node's port on the fabric
//   {bin/NAME}                           a helper program built at set-up
//   {cidr/services}                      the range the cluster allocates ClusterIPs from
const PLACEHOLDER = /\{((?:pod|svc|lb|node|host|ns|cgroup|bpffs|veth|port|bin|cidr)\/[a-z][a-z0-9-]*)\}/g;

/** kubeadm's default Service range, which the lab, `local` and minikube use. */
export const DEFAULT_SERVICE_CIDR = '10.96.0.0/12';

/**
 * How a placeholder resolves on a cluster: addresses for pod/svc/node/host, namespaces for ns, the Service range
 * for cidr/services, lab names for the rest.
 */
export function placeholderResolver(cluster: {
  address(ref: string): string;
  namespace(name: string): string;
  path(ref: string): string;
  readonly serviceCIDR?: string;
}): (ref: string) => string {
  return (ref) =>
    /^(pod|svc|lb|node|host)\//.test(ref)
      ? cluster.address(ref)
      : ref.startsWith('ns/')
        ? cluster.namespace(ref.slice('ns/'.length))
        : ref === 'cidr/services'
          ? (cluster.serviceCIDR ?? DEFAULT_SERVICE_CIDR)
          : cluster.path(ref);
}

/** The namespaces the `{ns/NAME}` placeholders in `text` name. */
export function namespacePlaceholders(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)]
    .map((m) => m[1]!)
    .filter((r) => r.startsWith('ns/'))
    .map((r) => r.slice(3));
}

/** A regular expression's text with its placeholders resolved as literal text (an address's dots match only dots). */
export function substitutePattern(pattern: string, resolve: (ref: string) => string): string {
  return pattern.replace(PLACEHOLDER, (_, ref: string) => resolve(ref).replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
}

export function substitute(argv: readonly string[], resolve: (ref: string) => string): string[] {
  return argv.map((a) => a.replace(PLACEHOLDER, (_, ref: string) => resolve(ref)));
}

export function commandArgv(cmd: string | string[]): string[] {
  return typeof cmd === 'string' ? splitWords(cmd) : cmd;
}

/** Splits on spaces, honouring '...' and "..." quotes. No expansion of any kind: the words go to execve as they are. */
export function splitWords(text: string): string[] {
  const words: string[] = [];
  const re = /'([^']*)'|"([^"]*)"|(\S+)/g;
  let current = '';
  let last = -1;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const piece = m[1] ?? m[2] ?? m[3] ?? '';
    if (m.index === last) current += piece;
    else {
      if (last !== -1) words.push(current);
      current = piece;
    }
    last = re.lastIndex;
  }
  if (last !== -1) words.push(current);
  return words;
}
