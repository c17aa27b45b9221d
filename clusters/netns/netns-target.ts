// A node, pod or host of the lab: commands run in its network namespace through nsenter, which,
// unlike `ip netns exec`, keeps the host's /sys (and so its cgroup mount).
import { runCommand, spawnCommand, type ExecOptions, type SpawnOptions } from '../command.ts';
import type { Target } from '../provider.ts';

export interface NetnsTargetOptions {
  /** /proc/PID/ns/mnt of the node's bpffs holder: bpftool and tc see the run's private bpffs there. */
  mountNs?: string;
  /** cgroup v2 directory joined before entering the namespace (socket-LB programs hook it). */
  cgroup?: string;
}

export class NetnsTarget implements Target {
  constructor(
    readonly ref: string,
    readonly netnsPath: string,
    private readonly options: NetnsTargetOptions = {},
  ) {}

  argv(argv: readonly string[]): string[] {
    const enter = ['nsenter', ...(this.options.mountNs ? [`--mount=${this.options.mountNs}`] : []), `--net=${this.netnsPath}`, '--', ...argv];
    if (!this.options.cgroup) return enter;
    // join the cgroup first (a constant script; the path and argv are passed as arguments, never spliced in)
    return ['sh', '-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', this.options.cgroup, ...enter];
  }

  exec(argv: readonly string[], options?: ExecOptions) {
    return runCommand(this.argv(argv), options, this.ref);
  }

  spawn(argv: readonly string[], options?: SpawnOptions) {
    return spawnCommand(this.argv(argv), options);
  }
}
