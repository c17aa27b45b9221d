// The reply went around the node that DNATed the request: that node forwarded the request to a backend on
// another node with the client's own address (nothing masqueraded it), so the backend's node answered the
// client directly, from the backend's address. The DNAT node's conntrack never saw the reply, so nothing
// reversed the NAT. Told from the conntrack entries of both nodes, not from the client's view alone.
import type { StateRead } from '../../../model/diagnosis.ts';
import { unNatedReply } from './bridged-reply.ts';
import { type Conntrack, type Ctx, type Detector, type Found, ctState, endpoint, lastConntrack } from './detector.ts';

function detect(ctx: Ctx): Found | undefined {
  if (ctx.probe.observed === 'ok') return undefined;
  const { packet } = unNatedReply(ctx);
  if (!packet || packet.sport === undefined) return undefined;
  const conntrack = ctx.events.filter((e): e is Conntrack => e.kind === 'conntrack');
  // the node that DNATed the request to the backend and expects the reply to the client's own address: no SNAT
  const dnat = conntrack.find(
    (e) =>
      e.packet.src === ctx.client &&
      e.packet.dst === ctx.target.ip &&
      e.reply.src === packet.src &&
      e.reply.dst === ctx.client,
  );
  if (!dnat) return undefined;
  const atDnat = lastConntrack(ctx, dnat.node);
  if (!atDnat?.unreplied) return undefined;
  // the backend's node: it saw the request with the client's address and saw the reply leave
  const answered = conntrack.filter(
    (e) =>
      e.node !== dnat.node &&
      e.packet.src === ctx.client &&
      e.packet.dst === packet.src &&
      e.packet.dport === packet.sport &&
      !e.unreplied,
  );
  const backend = answered.at(-1);
  if (!backend) return undefined;

  const what = packet.proto === 'udp' ? 'reply' : 'SYN-ACK';
  const request = packet.proto === 'udp' ? 'query' : 'SYN';
  const from = endpoint(packet.src, packet.sport);
  const to = endpoint(ctx.client, packet.dport);
  const vip = endpoint(ctx.target.ip, ctx.target.port);
  const marked = ctx.events.some(
    (e) => e.kind === 'rule' && e.node === dnat.node && /-j KUBE-MARK-MASQ\b/.test(e.rule ?? ''),
  );
  const clientDrop = ctx.events.find(
    (e) => e.kind === 'drop' && e.packet.src === packet.src && e.packet.dst === ctx.client,
  );
  const sentences = [
    `${dnat.node} DNATed the ${request} to ${vip} to ${from} and forwarded it with the client's own address ${ctx.client}: nothing masqueraded it${marked ? '' : ` (no KUBE-MARK-MASQ rule matched it on ${dnat.node})`}.`,
    `${backend.node} saw the connection as ${endpoint(ctx.client, backend.packet.sport)} > ${from} (${ctState(backend)}) and sent the ${what} from ${from} straight to ${ctx.client}, not back through ${dnat.node}.`,
    `conntrack on ${dnat.node} still shows the connection ${ctState(atDnat)}: the ${what} never crossed it, so it was never reverse-NATed to ${vip}.`,
  ];
  if (clientDrop?.kind === 'drop')
    sentences.push(
      `The client dropped it (${clientDrop.reason} in ${clientDrop.location}): it has no connection with ${from}.`,
    );
  sentences.push(
    `A client outside the pod network reaches a ClusterIP through a node only if that node masquerades the request (kube-proxy's clusterCIDR, or masqueradeAll), so that the ${what} comes back through it.`,
  );
  const evidence: StateRead[] = [
    { where: `node/${dnat.node}`, command: 'conntrack -E', output: atDnat.line },
    { where: `node/${backend.node}`, command: 'conntrack -E', output: backend.line },
  ];
  return {
    culprit: {
      kind: 'kernel',
      node: dnat.node,
      where: 'nat (the DNATed request left un-masqueraded)',
      text: `${what} ${from} > ${to} sent by ${backend.node} straight to the client, bypassing ${dnat.node}'s reverse NAT`,
    },
    packet,
    reason: sentences.join(' '),
    evidence,
  };
}

export const replyBypass: Detector = { name: 'reply-bypass', detect };
