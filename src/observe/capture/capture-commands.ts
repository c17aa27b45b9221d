// What `netrepro capture` reads on a node, one read-only command per item, as data: the same list runs command by
// command on a Target (this host, a kept lab's namespace) or as one script in a `kubectl debug` pod.
//
// Read-only means no rule, conntrack entry, packet or counter changes, and no kernel module loads: `iptables -L`
// is never used (iptables-save is), and a command that talks to a netfilter netlink subsystem (nft, conntrack,
// iptables-nft-save) runs only when its module is already loaded, because asking a subsystem the kernel does not
// have makes it load the module (nfnetlink's request_module).

/** The modules whose presence decides whether a command may run, and br_netfilter, which the bundle records. */
export const WATCHED_MODULES = ['nf_tables', 'nf_conntrack_netlink', 'br_netfilter', 'ip_tables'] as const;
export type WatchedModule = (typeof WATCHED_MODULES)[number];

export interface CaptureCommand {
  /** The item's key: a bundle file's name without extension (manifest `files`), or a fact (`kernel`...). */
  key: string;
  argv: readonly string[];
  /** Run only when this module is loaded (else the item is unreadable, saying so): its subsystem would load it. */
  needsModule?: WatchedModule;
  /** Run only when iptables is not iptables-nft or nf_tables is loaded (iptables-nft-save would load it). */
  needsIptablesTables?: boolean;
  /** Not run, for this reason (the item is unreadable with it). */
  skip?: string;
}

/**
 * Whether a module is in the kernel, as a shell function: without /proc/modules the kernel loads no module at all
 * (built without module support), so every command is safe; else loaded (/proc/modules), built in
 * (modules.builtin), or present in /sys/module (a built-in one with parameters, or a loaded one). nsenter --net
 * keeps the host's /proc/modules and /sys.
 */
export const LOADED_FUNCTION =
  'loaded() { [ ! -e /proc/modules ] || [ -d "/sys/module/$1" ] || grep -q "^$1 " /proc/modules 2>/dev/null || grep -q "/$1\\.ko" "/lib/modules/$(uname -r)/modules.builtin" 2>/dev/null; }';

/** Prints each watched module that is in the kernel, one a line. */
export const MODULES_COMMAND: CaptureCommand = {
  key: 'modules',
  argv: [
    'sh',
    '-c',
    `${LOADED_FUNCTION}\nfor m in "$@"; do loaded "$m" && echo "$m"; done; true`,
    'sh',
    ...WATCHED_MODULES,
  ],
};

/**
 * The sysctls that decide a packet's fate, read from /proc/sys (whose net/ part is the reading process's network
 * namespace): one `path=value` a line, then whether net/bridge exists at all (it does only with br_netfilter loaded,
 * since Linux 5.3 per namespace).
 */
export const SYSCTL_PATHS = [
  'net/ipv4/ip_forward',
  'net/ipv4/conf/*/rp_filter',
  'net/ipv4/conf/*/route_localnet',
  'net/ipv4/conf/*/forwarding',
  'net/bridge/bridge-nf-call-iptables',
  'net/bridge/bridge-nf-call-ip6tables',
  'net/bridge/bridge-nf-call-arptables',
  'net/netfilter/nf_conntrack_tcp_be_liberal',
  'net/netfilter/nf_conntrack_max',
  'net/netfilter/nf_conntrack_tcp_loose',
  'net/netfilter/nf_conntrack_udp_timeout',
  'net/netfilter/nf_conntrack_udp_timeout_stream',
  'net/netfilter/nf_conntrack_tcp_timeout_established',
  'net/netfilter/nf_conntrack_tcp_timeout_close_wait',
  'net/ipv4/ip_local_port_range',
  'net/ipv4/vs/*',
] as const;

/** The marker line the sysctl script ends with: `#net/bridge=present` or `=absent`. */
export const BRIDGE_MARKER = '#net/bridge=';

const SYSCTL_SCRIPT = [
  'cd /proc/sys || exit 1',
  // globs unquoted on purpose: conf/*/ is every interface; an unmatched one stays literal and fails -f
  'for f in "$@"; do for p in $f; do [ -f "$p" ] && [ -r "$p" ] && v=$(cat "$p" 2>/dev/null) && printf \'%s=%s\\n\' "$p" "$v"; done; done',
  `if [ -d net/bridge ]; then echo '${BRIDGE_MARKER}present'; else echo '${BRIDGE_MARKER}absent'; fi`,
].join('\n');

export const SYSCTLS_COMMAND: CaptureCommand = {
  key: 'sysctls',
  argv: ['sh', '-c', SYSCTL_SCRIPT, 'sh', ...SYSCTL_PATHS],
};

/** The default bound of `--conntrack`: lines of `conntrack -L` kept. */
export const CONNTRACK_DEFAULT_LINES = 10_000;

/** `conntrack -L -o extended`, its first `lines + 1` lines (one more tells a truncation); 127 when there is no conntrack. */
export function conntrackListCommand(lines: number): CaptureCommand {
  return {
    key: 'conntrack',
    argv: [
      'sh',
      '-c',
      'command -v conntrack >/dev/null 2>&1 || { echo "conntrack: command not found" >&2; exit 127; }; conntrack -L -o extended | head -n "$1"',
      'sh',
      String(lines + 1),
    ],
    needsModule: 'nf_conntrack_netlink',
  };
}

/** Facts of the node for the manifest (not files). */
export const FACT_COMMANDS: readonly CaptureCommand[] = [
  { key: 'kernel', argv: ['uname', '-r'] },
  { key: 'hostname', argv: ['hostname'] },
  { key: 'iptables-version', argv: ['iptables', '--version'] },
  // which nft tables exist: nft-ruleset.txt is kept only when some are not iptables-save's
  { key: 'nft-tables', argv: ['nft', 'list', 'tables'], needsModule: 'nf_tables' },
];

/** Bundle files read as they are printed: key -> file name and command. */
export const FILE_COMMANDS: readonly (CaptureCommand & { file: string })[] = [
  { key: 'iptables-save', file: 'iptables-save.txt', argv: ['iptables-save', '-c'], needsIptablesTables: true },
  { key: 'nft-ruleset', file: 'nft-ruleset.txt', argv: ['nft', 'list', 'ruleset'], needsModule: 'nf_tables' },
  { key: 'ip-addr', file: 'ip-addr.json', argv: ['ip', '-j', '-d', 'addr', 'show'] },
  { key: 'ip-link', file: 'ip-link.json', argv: ['ip', '-j', '-d', 'link', 'show'] },
  { key: 'ip-route', file: 'ip-route.json', argv: ['ip', '-j', 'route', 'show', 'table', 'all'] },
  { key: 'ip-rule', file: 'ip-rule.json', argv: ['ip', '-j', 'rule', 'show'] },
  { key: 'ip-neigh', file: 'ip-neigh.json', argv: ['ip', '-j', 'neigh', 'show'] },
  {
    key: 'conntrack-stats',
    file: 'conntrack-stats.txt',
    argv: ['conntrack', '-S'],
    needsModule: 'nf_conntrack_netlink',
  },
  { key: 'bpf-net', file: 'bpf-net.json', argv: ['bpftool', '-j', 'net', 'show'] },
  { key: 'bpf-cgroup', file: 'bpf-cgroup.json', argv: ['bpftool', '-j', 'cgroup', 'tree'] },
];

/**
 * `bpftool -j cgroup tree`, from `root` when given: a kept run's node is a namespace of a shared host, whose whole
 * tree holds every other run's programs too; its own cgroup (a Cilium lab node's pods, a local node's kubelet root)
 * holds its own.
 */
export function cgroupTreeCommand(root: CgroupRoot): CaptureCommand & { file: string } {
  const base = FILE_COMMANDS.find((c) => c.key === 'bpf-cgroup')!;
  if (root === false) return { ...base, skip: NO_OWN_CGROUP };
  return root ? { ...base, argv: [...base.argv, root] } : base;
}

/**
 * Where a node's cgroup programs are read: its own cgroup, the whole tree (undefined: a node that is a host), or
 * nowhere (false: a namespace of a shared host without a cgroup of its own).
 */
export type CgroupRoot = string | undefined | false;

export const NO_OWN_CGROUP =
  "the node is a network namespace of a shared host without a cgroup of its own: the host's cgroup tree holds other runs' programs, none of this node's";

/** Bundle files made from a command's output rather than kept as printed. */
export const DERIVED_FILES = {
  sysctls: 'sysctls.json',
  modules: 'modules.json',
  conntrack: 'conntrack.txt',
} as const;

/** Every command of one node's capture, in the order they run (`cgroupRoot`: cgroupTreeCommand's). */
export function nodeCommands(conntrackLines: number | undefined, cgroupRoot?: CgroupRoot): CaptureCommand[] {
  return [
    MODULES_COMMAND,
    ...FACT_COMMANDS,
    SYSCTLS_COMMAND,
    ...FILE_COMMANDS.map((c) => (c.key === 'bpf-cgroup' ? cgroupTreeCommand(cgroupRoot) : c)),
    ...(conntrackLines !== undefined ? [conntrackListCommand(conntrackLines)] : []),
  ];
}
