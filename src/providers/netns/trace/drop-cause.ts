// Why the kernel dropped a packet, read from the node's own state right when the drop is reported:
//  - NEIGH_FAILED: the neighbour table names the address that never answered ARP (FAILED);
//  - a bridge that will not send a frame back out the port it came in on: the kernel frees it without
//    a reason (NOT_SPECIFIED, br_forward tail-calls kfree_skb, so the location reads
//    br_handle_frame_finish+0x...). A code offset alone would be a guess; the state is not: the frame's
//    destination MAC is behind its ingress port in the bridge's FDB, and that port's hairpin mode is
//    off. The drop event carries both the ingress port (skb->dev) and the destination MAC.
// Either state makes the drop repeat for every retransmission. Parsing is pure (unit-tested).
import type { Target } from '../../../contract/provider.ts';
import type { DropCause, TraceEvent } from '../../../model/trace-events.ts';

type Drop = Extract<TraceEvent, { kind: 'drop' }>;

/** A node's drop its state may explain: a failed neighbour, or a frame dropped on a bridge port. */
export function explainable(drop: Drop): boolean {
  if (!drop.where.startsWith('node/') || drop.iface === '-') return false;
  return drop.reason === 'NEIGH_FAILED' || (drop.reason === 'NOT_SPECIFIED' && drop.dmac !== undefined);
}

/** Reads the node's neighbour table, or its bridge ports and FDB, for `drop` (an `explainable` one). */
export async function readDropCause(node: Target, drop: Drop): Promise<DropCause | undefined> {
  const json = async (argv: string[]): Promise<unknown> => {
    const r = await node.exec(argv, { reject: false, timeoutMs: 2000 });
    try {
      return r.exitCode === 0 ? JSON.parse(r.stdout) : undefined;
    } catch {
      return undefined;
    }
  };
  if (drop.reason === 'NEIGH_FAILED')
    return neighbourCause(await json(['ip', '-4', '-j', 'neigh', 'show', 'dev', drop.iface]), drop);
  const [port, fdb] = await Promise.all([
    json(['bridge', '-j', '-d', 'link', 'show', 'dev', drop.iface]),
    json(['bridge', '-j', 'fdb', 'show']),
  ]);
  return hairpinCause(port, fdb, drop);
}

/** `ip -j neigh show dev IFACE`: the packet's destination is a neighbour that failed to resolve. */
export function neighbourCause(entries: unknown, drop: Drop): DropCause | undefined {
  const list = Array.isArray(entries) ? (entries as { dst?: string; state?: string[] }[]) : [];
  const entry = list.find(
    (e) => e.dst === drop.packet.dst && e.state?.some((s) => s === 'FAILED' || s === 'INCOMPLETE'),
  );
  return entry ? { kind: 'neighbour', neighbour: entry.dst!, state: entry.state!.join(' ') } : undefined;
}

/**
 * `bridge -j -d link show dev IFACE` and `bridge -j fdb show`: IFACE is a bridge port with hairpin off,
 * and the bridge learned the frame's destination MAC behind IFACE itself.
 */
export function hairpinCause(port: unknown, fdb: unknown, drop: Drop): DropCause | undefined {
  const link = (Array.isArray(port) ? (port as { ifname?: string; master?: string; hairpin?: boolean }[]) : []).find(
    (l) => l.ifname === drop.iface,
  );
  if (!link?.master || link.hairpin !== false || !drop.dmac) return undefined;
  const entries = Array.isArray(fdb)
    ? (fdb as { mac?: string; ifname?: string; master?: string; flags?: string[] }[])
    : [];
  const behind = entries.find((e) => e.mac === drop.dmac && e.master === link.master && !e.flags?.includes('self'));
  return behind?.ifname === drop.iface
    ? { kind: 'hairpin-off', bridge: link.master, port: drop.iface, mac: drop.dmac }
    : undefined;
}
