// Commands in scenario files: argv (a string is split on spaces, honouring quotes; never a shell) with
// placeholders resolved per lab.
//   {pod/web} {svc/x} {node/x} {host/x}  addresses
//   {cgroup/NODE} {bpffs/NODE}           lab paths of a node's pod cgroup and bpffs pin directory
//   {veth/POD}                           the pod's host-side interface
//   {port/NODE}                          the node's port on the fabric
//   {bin/NAME}                           a helper program built at set-up
const PLACEHOLDER = /\{((?:pod|svc|node|host|cgroup|bpffs|veth|port|bin)\/[a-z][a-z0-9-]*)\}/g;

/** How a placeholder resolves on a cluster: addresses for pod/svc/node/host, lab names for the rest. */
export function placeholderResolver(cluster: {
  address(ref: string): string;
  path(ref: string): string;
}): (ref: string) => string {
  return (ref) => (/^(pod|svc|node|host)\//.test(ref) ? cluster.address(ref) : cluster.path(ref));
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
