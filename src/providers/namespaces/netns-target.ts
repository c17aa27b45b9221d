// A node, pod or host of the lab: a small owned handle on one of its namespaces, as containernetworking/plugins
// hands out a NetNS (pkg/ns/ns_linux.go @2fd74c0dc92d89f98fe0e34a5ebf1433d3334153: a path, and Do to run
// inside it). Commands run in its network namespace (and, for a Cilium node, its bpffs holder's mount namespace
// and the node's cgroup), entered as namespace-entry.ts describes, through the lab's command runner.
import type { CommandRunner, ExecOptions, SpawnOptions } from '../../contract/command.ts';
import type { NamespaceEntry } from '../../contract/namespace-entry.ts';
import type { Target } from '../../contract/provider.ts';

export interface NetnsTargetOptions {
  /** The lab's command runner: its native spawner, or node:child_process. */
  commands: CommandRunner;
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
    options: NetnsTargetOptions,
  ) {
    this.enter = { net: netnsPath, mount: options.mountNs, cgroup: options.cgroup };
    this.commands = options.commands;
  }

  exec(argv: readonly string[], options?: ExecOptions) {
    return this.commands.exec(argv, { ...options, enter: this.enter }, this.ref);
  }

  spawn(argv: readonly string[], options?: SpawnOptions) {
    return this.commands.spawn(argv, { ...options, enter: this.enter });
  }
}
