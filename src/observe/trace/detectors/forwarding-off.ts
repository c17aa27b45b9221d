// A node would not forward the client's packet: it came in on an interface whose IPv4 forwarding is off
// (net.ipv4.ip_forward = 0 turns every interface's off), and the kernel dropped it in ip_error with
// IP_INADDRERRORS, sending nothing back. The settings, read at the drop (providers' drop-cause.ts), say which.
import { type Ctx, type Detector, type Drop, type Found, flowPacketWords } from './detector.ts';

function detect(ctx: Ctx): Found | undefined {
  const drop = ctx.events.find(
    (e): e is Drop => e.kind === 'drop' && e.cause?.kind === 'forwarding-off' && ctx.flow.concerns(e.packet),
  );
  if (drop?.cause?.kind !== 'forwarding-off') return undefined;
  const { iface, ipForward, ifaceForwarding } = drop.cause;
  const here = drop.where.replace(/^node\//, '');
  const setting = `net.ipv4.conf.${iface.replaceAll('.', '/')}.forwarding`;
  return {
    culprit: {
      kind: 'kernel',
      node: drop.where,
      where: `IPv4 forwarding on ${iface}`,
      text: `net.ipv4.ip_forward = ${ipForward}, ${setting} = ${ifaceForwarding}`,
    },
    packet: drop.packet,
    reason: [
      `${here} dropped ${flowPacketWords(ctx, drop.packet)} as it came in on ${iface}: the packet was to be forwarded and ${iface} does not forward (IP_INADDRERRORS in ${drop.location}); nothing is sent back, so the client retransmits into the same drop.`,
      ipForward === 0
        ? `net.ipv4.ip_forward is 0 on ${here}, which sets every interface's forwarding to 0: the node routes nothing between its pods and the rest of the network.`
        : `${setting} is 0 although net.ipv4.ip_forward is ${ipForward}: forwarding was turned off on that interface alone.`,
    ].join(' '),
    evidence: [
      {
        where: drop.where,
        command: `sysctl net.ipv4.ip_forward ${setting}`,
        output: `net.ipv4.ip_forward = ${ipForward}\n${setting} = ${ifaceForwarding}`,
      },
    ],
  };
}

export const forwardingOff: Detector = { name: 'forwarding-off', detect };
