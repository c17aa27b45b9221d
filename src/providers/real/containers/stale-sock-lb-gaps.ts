// Why no real provider attaches a stale copy of Cilium's socket-LB program, said in the skip reason.
// What Cilium does was read in cilium/cilium at v1.19.1 (d0d0c879) and on main at 1.20.0-dev (0e03b0e8): the
// agent compiles bpf_sock.c into its state dir at start (pkg/datapath/loader/base.go), loads it with
// load-time constants (config.BPFSock) and its maps pinned by name in /sys/fs/bpf/tc/globals, and attaches
// each program through a bpf_link pinned in /sys/fs/bpf/cilium/socketlb/links/cgroup on the cgroup root
// /run/cilium/cgroupv2 (pkg/socketlb); PROG_ATTACH only where bpf_link is missing or an older agent attached
// without flags. The pinned chart's tag, v1.20.0, is in no snapshot this was written from, and how a second copy
// loaded by hand runs ahead of that link was not read at any tag: docs/real-clusters.md, known gaps.
import type { Capability } from '../../../model/capabilities.ts';

const STALE_PROGRAM =
  "Cilium attaches its socket-LB programs through bpf_links on its cgroup root, from a bpf_sock.o its agent compiles at start and loads with load-time constants; how a copy loaded by hand, with its own service map, would run ahead of them is not grounded at the pinned chart's 1.20.0 (docs/real-clusters.md, known gaps)";

/** The reason beside each socket-LB capability a real provider lacks. */
export const STALE_SOCK_LB_LACKS_BECAUSE: Partial<Record<Capability, string>> = {
  'action/sock-lb-stale-program': STALE_PROGRAM,
  'action/sock-lb-detach-stale': 'no real provider attaches a stale socket-LB program to detach',
};
