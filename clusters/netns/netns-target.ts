// A node or pod of the lab: commands run in its network namespace through nsenter, which,
// unlike `ip netns exec`, keeps the host's /sys (and so its bpffs and cgroup mounts).
import { runCommand, spawnCommand, type ExecOptions, type SpawnOptions } from '../command.ts';
import type { Target } from '../provider.ts';

export class NetnsTarget implements Target {
  constructor(
    readonly ref: string,
    readonly netnsPath: string,
  ) {}

  argv(argv: readonly string[]): string[] {
    return ['nsenter', `--net=${this.netnsPath}`, '--', ...argv];
  }

  exec(argv: readonly string[], options?: ExecOptions) {
    return runCommand(this.argv(argv), options, this.ref);
  }

  spawn(argv: readonly string[], options?: SpawnOptions) {
    return spawnCommand(this.argv(argv), options);
  }
}
