// A cgroup socket-LB program rewrote connect() or sendmsg() to the Service: which program, in what attach
// order, with which stale mapping, and what became of the packet at the address it was sent to.
import type { TraceFact } from '../../../model/trace-events.ts';
import type { Packet } from '../../probes/packet-watch.ts';
import { type Ctx, type Detector, type Drop, endpoint, type Found, ordinal } from './detector.ts';

/** connect() (or a UDP sendmsg()) to the service was rewritten by a cgroup program to somewhere else (socket LB). */
function detect(ctx: Ctx): Found | undefined {
  const syn = ctx.packets.find((p) => p.src === ctx.client && (p.flags === 'S' || p.proto === 'udp'));
  if (!syn || (syn.dst === ctx.target.ip && syn.dport === ctx.target.port)) return undefined;
  const sentTo = endpoint(syn.dst, syn.dport);
  const frontend = endpoint(ctx.target.ip, ctx.target.port);
  const all = ctx.facts
    .filter((f): f is Extract<TraceFact, { kind: 'cgroup-program' }> => f.kind === 'cgroup-program')
    .sort((a, b) => a.order - b.order);
  // the hook that rewrote it: connect4 for TCP (and connected UDP), sendmsg4 for UDP otherwise
  const rewrites = (p: (typeof all)[number]) =>
    p.mappings.some((m) => m.frontend === frontend && m.backends.includes(sentTo));
  const culprit =
    all.find((p) => rewrites(p) && (syn.proto === 'tcp' ? /connect/.test(p.attach) : /sendmsg/.test(p.attach))) ??
    all.find(rewrites);
  if (!culprit) return undefined;
  const programs = all.filter((p) => p.attach === culprit.attach);
  const others = programs.filter((p) => p !== culprit);
  const sentences = [
    `${syn.proto === 'udp' && /sendmsg/.test(culprit.attach) ? 'sendmsg()' : 'connect()'} to ${frontend} was rewritten to ${sentTo} by the ${hookName(culprit.attach)} program ${culprit.name} (id ${culprit.id}${culprit.pinned ? `, pinned ${culprit.pinned}` : ''}), ${ordinal(culprit.order)} of ${culprit.of} in attach order on ${culprit.node}'s pod cgroup: its own service map still sends ${frontend} to ${sentTo}.`,
    ...others.map(
      (o) =>
        `The ${ordinal(o.order)} program (id ${o.id}${o.pinned ? `, ${o.pinned}` : ''}) maps ${frontend} to ${o.mappings.find((m) => m.frontend === frontend)?.backends.join(', ') || 'nothing'}, but ${o.order > culprit.order ? 'runs after it and no longer sees the ClusterIP' : 'ran first without rewriting it'}.`,
    ),
    fateAtDeadBackend(ctx, syn),
  ];
  return {
    culprit: {
      kind: 'bpf-program',
      node: culprit.node,
      where: `${culprit.attach} ${culprit.cgroup} (${ordinal(culprit.order)} of ${culprit.of})`,
      text: `${culprit.name} id ${culprit.id}: ${frontend} -> ${sentTo}`,
    },
    packet: {
      proto: syn.proto,
      src: syn.src,
      dst: syn.dst,
      sport: syn.sport,
      dport: syn.dport,
      flags: syn.proto === 'tcp' ? 'SYN' : undefined,
    },
    reason: sentences.join(' '),
  };
}

/**
 * What became of the packet sent to the rewritten destination: a node whose ARP for it got no answer
 * dropped it (NEIGH_FAILED) and, where the capture shows it, answered the client with an ICMP error.
 */
function fateAtDeadBackend(ctx: Ctx, sent: Packet): string {
  const what = sent.proto === 'udp' ? 'datagram' : 'SYN';
  const to = endpoint(sent.dst, sent.dport);
  const failed = ctx.events.find(
    (e): e is Drop =>
      e.kind === 'drop' && e.reason === 'NEIGH_FAILED' && e.packet.src === ctx.client && e.packet.dst === sent.dst,
  );
  const icmp = ctx.packets.find((p) => p.dst === ctx.client && p.icmp?.about === sent.dst);
  const answered = icmp?.icmp ? ` and answered the client with ICMP ${icmp.icmp.name} from ${icmp.src}` : '';
  if (!failed)
    return icmp?.icmp
      ? `The ${what} went to ${to}; ICMP ${icmp.icmp.name} from ${icmp.src} answered it.`
      : `The ${what} went to ${to} and was never answered.`;
  const node = failed.where.replace(/^node\//, '');
  const neighbour =
    failed.cause?.kind === 'neighbour'
      ? `its ARP for ${failed.cause.neighbour} on ${failed.iface} got no answer (${failed.cause.state} in its neighbour table)`
      : `its neighbour resolution on ${failed.iface} failed`;
  return `The ${what} went to ${to}, which nobody holds: ${node} queued it while ${neighbour}, then dropped it (NEIGH_FAILED in ${failed.location})${answered}.`;
}

/** `cgroup_inet4_connect` -> `connect4`, `cgroup_udp4_sendmsg` -> `sendmsg4`. */
const hookName = (attach: string) => attach.replace(/^cgroup_(inet|udp)4_(\w+)$/, '$24');

export const socketLbRewrite: Detector = { name: 'socket-lb-rewrite', detect };
