// A lab's nodes give up on a neighbour that does not answer ARP after 3 probes 50 ms apart (150 ms),
// where a real node waits 3 x 1 s (mcast_solicit x retrans_time_ms). A packet to an address nobody
// holds (a stale socket-LB backend, say) is then freed with NEIGH_FAILED and its sender answered with
// ICMP host-unreachable ("No route to host") while the probe still runs, instead of after its 800 ms
// deadline; the trace names the neighbour for the diagnosis. A live neighbour answers ARP in softirq,
// well under a millisecond even under load, so nothing else changes (README: "How the netns lab is
// built"). Set per device, in the node's own namespace: net.ipv4.neigh.default exists only in the
// root namespace (a new device copies the root's values), which a lab never changes. Pods keep the
// kernel's timing: a pod that sends to a dead on-link address still waits the real 3 s.
import type { Target } from '../../contract/provider.ts';

export const NEIGHBOUR_PROBES = 3;
export const NEIGHBOUR_RETRANS_MS = 50;

/** Every device of `node` (lo aside), once they all exist: one shell in the node's namespace. */
export function fastNeighbourFailure(node: Target): Promise<unknown> {
  // a constant script; the values are passed as arguments
  const script =
    'for d in /proc/sys/net/ipv4/neigh/*/; do case "$d" in */lo/|*/default/) continue;; esac; echo "$0" > "$d/mcast_solicit" && echo "$1" > "$d/retrans_time_ms" || exit 1; done';
  return node.exec(['sh', '-c', script, String(NEIGHBOUR_PROBES), String(NEIGHBOUR_RETRANS_MS)]);
}
