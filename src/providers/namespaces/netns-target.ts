// A node, pod, host or fabric that is a network namespace of this host (the netns lab's, the `local` cluster's):
// a small owned handle on it, as containernetworking/plugins hands out a NetNS (pkg/ns/ns_linux.go
// @2fd74c0dc92d89f98fe0e34a5ebf1433d3334153: a path, and Do to run inside it). Commands run in its network
// namespace (and, for a Cilium node of the lab, its bpffs holder's mount namespace and the node's cgroup),
// entered as namespace-entry.ts describes, through the given command runner.
import { defaultRunner, type CommandRunner, type ExecOptions, type SpawnOptions } from '../../contract/command.ts';
import type { NamespaceEntry } from '../../contract/namespace-entry.ts';
import type { Target } from '../../contract/provider.ts';

export interface NetnsTargetOptions {
  /** The lab's command runner: its native spawner, or node:child_process (the default). */
  commands?: CommandRunner;
  /** /proc/PID/ns/mnt of the node's bpffs holder: bpftool and tc see the run's private bpffs there. */
  mountNs?: string;
  /** cgroup v2 directory joined before entering the namespace (socket-LB programs hook it). */
  cgroup?: string;
}

export class NetnsTarget implements Target {
  private readonly enter: NamespaceEntry;
  private readonly commands: CommandRunner;

  constructor(
    readonly ref: string,
    readonly netnsPath: string,
    options: NetnsTargetOptions = {},
  ) {
    this.enter = { net: netnsPath, mount: options.mountNs, cgroup: options.cgroup };
    this.commands = options.commands ?? defaultRunner;
  }

  exec(argv: readonly string[], options?: ExecOptions) {
    return this.commands.exec(argv, { ...options, enter: this.enter }, this.ref);
  }

  spawn(argv: readonly string[], options?: SpawnOptions) {
    return this.commands.spawn(argv, { ...options, enter: this.enter });
  }
}
