// Source ports the harness gives a probe's client where one must be known before it sends: below the ephemeral
// range, so no other socket takes one, and never the same twice in a lab (until the range wraps), so a run never
// meets an earlier run's conntrack entry and its NAT decision.
import type { StartedCluster } from '../../contract/provider.ts';

export const SOURCE_PORTS = { first: 20_000, last: 29_999 } as const;

const next = new WeakMap<StartedCluster, number>();

/** A source port no earlier run in this lab used. */
export function nextSourcePort(cluster: StartedCluster): number {
  const port = next.get(cluster) ?? SOURCE_PORTS.first;
  next.set(cluster, port >= SOURCE_PORTS.last ? SOURCE_PORTS.first : port + 1);
  return port;
}
