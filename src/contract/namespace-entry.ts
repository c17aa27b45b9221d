// Running a command inside a lab namespace: what to enter, and the `nsenter` argv that does it. The
// native spawner (native-spawner.ts) enters the same namespaces itself; the argv is what runs without
// it and what every error and report shows, so a failed command can be pasted into a shell as it ran.

export interface NamespaceEntry {
  /** A network namespace file (/var/run/netns/NAME, /proc/PID/ns/net). */
  net: string;
  /** A mount namespace file (a node's bpffs holder), joined after the network namespace. */
  mount?: string;
  /** A cgroup v2 directory joined first (socket-LB programs hook it). */
  cgroup?: string;
}

/** `argv` as run inside `enter`: nsenter (nsenter keeps the host's /sys, unlike `ip netns exec`), behind sh to join a cgroup. */
export function enterArgv(enter: NamespaceEntry | undefined, argv: readonly string[]): readonly string[] {
  if (!enter) return argv;
  const nsenter = ['nsenter', ...(enter.mount ? [`--mount=${enter.mount}`] : []), `--net=${enter.net}`, '--', ...argv];
  if (!enter.cgroup) return nsenter;
  // a constant script; the path and argv are passed as arguments, never spliced in
  return ['sh', '-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', enter.cgroup, ...nsenter];
}
