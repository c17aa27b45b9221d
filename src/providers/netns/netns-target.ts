// A node, pod or host of the lab: commands run in its network namespace (and, for a Cilium node, its
// bpffs holder's mount namespace and the node's cgroup), entered as namespace-entry.ts describes.
import { runCommand, spawnCommand, type ExecOptions, type SpawnOptions } from '../../contract/command.ts';
import type { NamespaceEntry } from '../../contract/namespace-entry.ts';
import type { Target } from '../../contract/provider.ts';

export interface NetnsTargetOptions {
  /** /proc/PID/ns/mnt of the node's bpffs holder: bpftool and tc see the run's private bpffs there. */
  mountNs?: string;
  /** cgroup v2 directory joined before entering the namespace (socket-LB programs hook it). */
  cgroup?: string;
}

export class NetnsTarget implements Target {
  private readonly enter: NamespaceEntry;

  constructor(
    readonly ref: string,
    readonly netnsPath: string,
    options: NetnsTargetOptions = {},
  ) {
    this.enter = { net: netnsPath, mount: options.mountNs, cgroup: options.cgroup };
  }

  exec(argv: readonly string[], options?: ExecOptions) {
    return runCommand(argv, { ...options, enter: this.enter }, this.ref);
  }

  spawn(argv: readonly string[], options?: SpawnOptions) {
    return spawnCommand(argv, { ...options, enter: this.enter });
  }
}
