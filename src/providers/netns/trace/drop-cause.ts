// Why the kernel dropped a packet, read from the node's own state right when the drop is reported:
//  - NEIGH_FAILED: the neighbour table names the address that never answered ARP (FAILED);
//  - a bridge that will not send a frame back out the port it came in on: the kernel frees it without
//    a reason (NOT_SPECIFIED, br_forward tail-calls kfree_skb, so the location reads
//    br_handle_frame_finish+0x...). A code offset alone would be a guess; the state is not: the frame's
//    destination MAC is behind its ingress port in the bridge's FDB, and that port's hairpin mode is
//    off. The drop event carries both the ingress port (skb->dev) and the destination MAC.
//  - IP_INADDRERRORS in ip_error: a packet to be forwarded came in on an interface that does not forward;
//    net.ipv4.ip_forward and the interface's `forwarding` say so (ip_forward 0 turns every one off);
//  - NO_SOCKET of a TCP SYN in a pod or host: nothing listens on its port (the kernel answers it with a RST);
//    the sockets that do listen there (`ss -Htln`) say what the port should have been;
//  - IP_RPFILTER: the reverse path check failed on the interface the packet came in on. The settings behind
//    it (net.ipv4.conf.all and the interface's rp_filter: the kernel uses the higher) and the route back to
//    the packet's source (the lookup fib_validate_source makes: to the source, from the packet's
//    destination) say why: strict mode wants that route to leave by the same interface, loose mode any route.
// Each state makes the drop repeat for every retransmission. Every read is a netlink or /proc query: no
// packet, rule or conntrack entry. Parsing is pure (unit-tested).
import type { Target } from '../../../contract/provider.ts';
import type { DropCause, TraceEvent } from '../../../model/trace-events.ts';

type Drop = Extract<TraceEvent, { kind: 'drop' }>;

/** A drop its namespace's state may explain: a node's failed neighbour or frame dropped on a bridge port; a failed reverse path check anywhere. */
export function explainable(drop: Drop): boolean {
  if (drop.iface === '-') return false;
  if (drop.reason === 'IP_RPFILTER') return true;
  if (drop.reason === 'IP_INADDRERRORS' && drop.location.startsWith('ip_error')) return true;
  if (drop.reason === 'NO_SOCKET' && drop.packet.proto === 'tcp' && drop.packet.flags === 'SYN') return true;
  if (!drop.where.startsWith('node/')) return false;
  return drop.reason === 'NEIGH_FAILED' || (drop.reason === 'NOT_SPECIFIED' && drop.dmac !== undefined);
}

/** Reads the namespace's neighbour table, its bridge ports and FDB, or its rp_filter and routes, for `drop` (an `explainable` one). */
export async function readDropCause(where: Target, drop: Drop): Promise<DropCause | undefined> {
  const json = async (argv: string[]): Promise<unknown> => {
    const r = await where.exec(argv, { reject: false, timeoutMs: 2000 });
    try {
      return r.exitCode === 0 ? JSON.parse(r.stdout) : undefined;
    } catch {
      return undefined;
    }
  };
  if (drop.reason === 'IP_RPFILTER') return readRpFilterCause(where, drop);
  if (drop.reason === 'NO_SOCKET') {
    const r = await where.exec(['ss', '-Htln'], { reject: false, timeoutMs: 2000 });
    return r.exitCode === 0 ? noListenerCause(r.stdout, drop) : undefined;
  }
  if (drop.reason === 'IP_INADDRERRORS') {
    const r = await where.exec(['sysctl', '-n', 'net/ipv4/ip_forward', `net/ipv4/conf/${drop.iface}/forwarding`], {
      reject: false,
      timeoutMs: 2000,
    });
    return forwardingCause(r.stdout, drop);
  }
  if (drop.reason === 'NEIGH_FAILED')
    return neighbourCause(await json(['ip', '-4', '-j', 'neigh', 'show', 'dev', drop.iface]), drop);
  const [port, fdb] = await Promise.all([
    json(['bridge', '-j', '-d', 'link', 'show', 'dev', drop.iface]),
    json(['bridge', '-j', 'fdb', 'show']),
  ]);
  return hairpinCause(port, fdb, drop);
}

/** `sysctl -n` of net.ipv4.ip_forward and the interface's forwarding (two lines): the interface forwards nothing. */
export function forwardingCause(settings: string, drop: Drop): DropCause | undefined {
  const [ipForward, ifaceForwarding] = settings.trim().split(/\s+/).map(Number);
  if (!Number.isInteger(ipForward) || ifaceForwarding !== 0) return undefined;
  return { kind: 'forwarding-off', iface: drop.iface, ipForward: ipForward!, ifaceForwarding };
}

/** `ss -Htln`: the local addresses that listen (`0.0.0.0:8080`, `*:53`), none of them on the SYN's port. */
export function noListenerCause(ss: string, drop: Drop): DropCause | undefined {
  const port = drop.packet.dport;
  if (port === undefined) return undefined;
  const listening = ss
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[3])
    .filter((a): a is string => a !== undefined && a !== '');
  if (listening.some((a) => a.endsWith(`:${port}`))) return undefined;
  return { kind: 'no-listener', port, listening };
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

/**
 * The rp_filter values for the drop's interface and the route back to its source. The kernel looks the
 * source up as a destination with the packet's destination as the source address; `ip route get` makes
 * that lookup only for a local address (an output route), so a forwarded packet's is made without it.
 */
async function readRpFilterCause(where: Target, drop: Drop): Promise<DropCause | undefined> {
  const { src, dst } = drop.packet;
  const exec = (argv: string[]) => where.exec(argv, { reject: false, timeoutMs: 2000 });
  const withSource = ['ip', '-4', 'route', 'get', src, 'from', dst];
  const [settings, fromDst] = await Promise.all([
    exec(['sysctl', '-n', 'net/ipv4/conf/all/rp_filter', `net/ipv4/conf/${drop.iface}/rp_filter`]),
    exec(['ip', '-j', ...withSource.slice(1)]),
  ]);
  if (fromDst.exitCode === 0) return rpFilterCause(settings.stdout, withSource, fromDst, drop);
  const plain = ['ip', '-4', 'route', 'get', src];
  return rpFilterCause(settings.stdout, plain, await exec(['ip', '-j', ...plain.slice(1)]), drop);
}

/** `sysctl -n` of conf/all and conf/IFACE rp_filter (two lines), and what `ip -j` + `lookup` answered. */
export function rpFilterCause(
  settings: string,
  lookup: string[],
  answer: { exitCode: number | undefined; stdout: string; stderr: string },
  drop: Drop,
): DropCause | undefined {
  const [all, ifaceValue] = settings.trim().split(/\s+/).map(Number);
  if (!Number.isInteger(all) || !Number.isInteger(ifaceValue)) return undefined;
  const cause = {
    kind: 'rp-filter' as const,
    iface: drop.iface,
    all: all!,
    ifaceValue: ifaceValue!,
    lookup: lookup.join(' '),
  };
  if (answer.exitCode !== 0) {
    const error = answer.stderr.trim().replace(/^RTNETLINK answers: /, '') || `exit ${answer.exitCode}`;
    return { ...cause, route: { text: error, error } };
  }
  let route: { dst?: string; from?: string; gateway?: string; dev?: string; prefsrc?: string } | undefined;
  try {
    route = (JSON.parse(answer.stdout) as (typeof route)[])[0];
  } catch {}
  if (!route?.dst) return undefined;
  const text = [
    route.dst,
    ...(route.from ? ['from', route.from] : []),
    ...(route.gateway ? ['via', route.gateway] : []),
    ...(route.dev ? ['dev', route.dev] : []),
    ...(route.prefsrc ? ['src', route.prefsrc] : []),
  ].join(' ');
  return { ...cause, route: { text, dev: route.dev } };
}
