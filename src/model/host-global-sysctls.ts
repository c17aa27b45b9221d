// Kernel settings under net.* that a network namespace does not get a copy of: read-only outside the
// host's initial namespace, or missing there altogether. A node that is a network namespace (netns,
// local) or a container (kind, k3s, minikube's docker driver) shares them with the host, so a scenario
// that sets one cannot run on it without changing the host. Measured on Linux 6.18 with
// `unshare -n sysctl -w KEY=VALUE` as root: EINVAL for the read-only ones, no such file for the others.

/** What each knob is, and why a node of its own cannot set it. */
const HOST_GLOBAL: readonly [pattern: RegExp, why: string][] = [
  [
    /^net\.(netfilter\.)?nf_conntrack_(max|buckets|expect_max)$/,
    "is read-only outside the host's initial network namespace: one conntrack table size for the whole host",
  ],
  [
    /^net\.core\.(rmem|wmem)_(max|default)$/,
    "is read-only outside the host's initial network namespace: socket buffer limits are per host",
  ],
  [
    /^net\.ipv[46]\.neigh\.default\.gc_(thresh[123]|interval|stale_time)$/,
    "exists only in the host's initial network namespace: the neighbour table's garbage collection is per host",
  ],
  [
    /^net\.core\.(netdev_max_backlog|netdev_budget(_usecs)?|dev_weight)$/,
    "exists only in the host's initial network namespace: packet processing budgets are per CPU, for the whole host",
  ],
  [
    /^net\.ipv4\.(tcp_mem|udp_mem)$/,
    "exists only in the host's initial network namespace: memory pressure limits are per host",
  ],
  [/^net\.ipv4\.route\.(gc_thresh|max_size)$/, "exists only in the host's initial network namespace"],
];

/** Why `name` cannot be set per node, or undefined when a network namespace has its own copy. */
export function hostGlobalSysctl(name: string): string | undefined {
  return HOST_GLOBAL.find(([pattern]) => pattern.test(name))?.[1];
}
