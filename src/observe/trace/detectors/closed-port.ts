// Nothing listens on the port the client's SYN was sent to (a Service's targetPort that no container opened):
// the kernel of the pod (or host) it reached answered with a RST (NO_SOCKET in tcp_v4_rcv), which the node
// that DNATed the SYN reverse-NATs, so the client sees "connection refused" from the Service's address. What
// does listen there, read at the drop (providers' drop-cause.ts), shows which port was meant.
import { type Ctx, type Detector, type Drop, type Found, endpoint, flowPacketWords, showPacket } from './detector.ts';

function detect(ctx: Ctx): Found | undefined {
  const drop = ctx.events.find(
    (e): e is Drop =>
      e.kind === 'drop' &&
      e.reason === 'NO_SOCKET' &&
      e.packet.proto === 'tcp' &&
      e.packet.flags === 'SYN' &&
      ctx.flow.concerns(e.packet),
  );
  if (!drop) return undefined;
  const to = endpoint(drop.packet.dst, drop.packet.dport);
  const listening = drop.cause?.kind === 'no-listener' ? drop.cause.listening : undefined;
  const rst = ctx.packets.find((p) => p.dst === ctx.client && p.flags?.startsWith('R'));
  const translated = ctx.flow.translationOf(drop.packet);
  const sentences = [
    `${drop.where} answered the client's SYN ${flowPacketWords(ctx, drop.packet)} with a RST: nothing listens on ${to} (NO_SOCKET in ${drop.location}).`,
  ];
  if (listening)
    sentences.push(
      listening.length
        ? `${drop.where} listens on ${listening.join(', ')}, not on port ${drop.packet.dport}.`
        : `${drop.where} listens on no TCP port at all.`,
    );
  // sent to another address than the one it reached: a DNAT on the way (a Service's) chose the port
  if (drop.packet.dst !== ctx.target.ip)
    sentences.push(
      `The client sent it to ${endpoint(ctx.target.ip, ctx.target.port)}; ${translated ? `${translated.node}'s` : 'a'} DNAT sent it on to ${to}: port ${drop.packet.dport} is the Service's targetPort, and a targetPort no container of the pod listens on refuses every connection through the Service.`,
    );
  if (rst)
    sentences.push(
      `The client got the RST${translated ? `, reverse-NATed by ${translated.node},` : ''} from ${endpoint(rst.src, rst.sport)}: connect() failed with ECONNREFUSED.`,
    );
  return {
    culprit: {
      kind: 'socket',
      node: drop.where,
      where: `no listener on ${to}`,
      text: `NO_SOCKET: ${showPacket(drop.packet)}${listening ? `; listening: ${listening.join(', ') || 'none'}` : ''}`,
    },
    packet: drop.packet,
    reason: sentences.join(' '),
    ...(listening
      ? {
          evidence: [
            { where: drop.where, command: 'ss -Htln', output: listening.join('\n') || '(no listening socket)' },
          ],
        }
      : {}),
  };
}

export const closedPort: Detector = { name: 'closed-port', detect };
