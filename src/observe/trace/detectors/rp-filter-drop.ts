// The reverse path check dropped a packet of the flow (IP_RPFILTER): the rp_filter values that applied on the
// interface it came in on and the route back to its source, read from the namespace at the drop
// (providers' drop-cause.ts), say why. The kernel uses the higher of conf/all and conf/IFACE; strict mode
// (1) wants the route back to leave by the interface the packet came in on, loose mode (2) any route back.
import type { StateRead } from '../../../model/diagnosis.ts';
import type { DropCause } from '../../../model/trace-events.ts';
import { type Ctx, type Detector, type Drop, type Found, flowPacketWords } from './detector.ts';

type RpFilter = Extract<DropCause, { kind: 'rp-filter' }>;

const MODES: Record<number, string> = { 0: 'no source validation', 1: 'strict', 2: 'loose' };

/** `net.ipv4.conf.flannel/1.rp_filter`: the setting's name as sysctl prints it (a dot in an interface name is a slash there). */
const setting = (iface: string) => `net.ipv4.conf.${iface.replaceAll('.', '/')}.rp_filter`;

/** Why the check failed, from the mode and the route back. */
function why(cause: RpFilter, iface: string, here: string): string {
  const mode = Math.max(cause.all, cause.ifaceValue);
  const lookup = `\`${cause.lookup}\` in ${here}`;
  if (mode === 1)
    return cause.route.error
      ? `Strict mode accepts a packet only when the route back to its source leaves by the interface it came in on; ${lookup} finds no route back at all (${cause.route.error}).`
      : `Strict mode accepts a packet only when the route back to its source leaves by the interface it came in on; ${lookup} gives \`${cause.route.text}\`: the reply would leave by ${cause.route.dev}, not ${iface} (asymmetric routes).`;
  if (mode === 2)
    return cause.route.error
      ? `Loose mode accepts a packet when any route leads back to its source; ${lookup} finds none (${cause.route.error}).`
      : `Loose mode accepts a packet when any route leads back to its source; ${lookup} gives \`${cause.route.text}\`.`;
  return `${lookup} gives \`${cause.route.text}\`.`;
}

function detect(ctx: Ctx): Found | undefined {
  const drop = ctx.events.find(
    (e): e is Drop => e.kind === 'drop' && e.reason === 'IP_RPFILTER' && ctx.flow.concerns(e.packet),
  );
  if (!drop) return undefined;
  const cause = drop.cause?.kind === 'rp-filter' ? drop.cause : undefined;
  const here = drop.where.replace(/^node\//, '');
  const sentences = [
    `${here} dropped ${flowPacketWords(ctx, drop.packet)} as it came in on ${drop.iface}: its reverse path check failed (IP_RPFILTER in ${drop.location}).`,
  ];
  const evidence: StateRead[] = [];
  if (cause) {
    const mode = Math.max(cause.all, cause.ifaceValue);
    sentences.push(
      `rp_filter on ${drop.iface} is ${mode} (${MODES[mode] ?? 'unknown'}): the kernel uses the higher of net.ipv4.conf.all.rp_filter = ${cause.all} and ${setting(drop.iface)} = ${cause.ifaceValue}.`,
      why(cause, drop.iface, here),
    );
    evidence.push(
      {
        where: drop.where,
        command: `sysctl net.ipv4.conf.all.rp_filter ${setting(drop.iface)}`,
        output: `net.ipv4.conf.all.rp_filter = ${cause.all}\n${setting(drop.iface)} = ${cause.ifaceValue}`,
      },
      { where: drop.where, command: cause.lookup, output: cause.route.text },
    );
  }
  sentences.push('Every retransmission is dropped the same way.');
  const mode = cause && Math.max(cause.all, cause.ifaceValue);
  return {
    culprit: {
      kind: 'kernel',
      node: drop.where,
      where: `reverse path filter on ${drop.iface}`,
      text: cause
        ? `IP_RPFILTER: rp_filter ${mode} (${MODES[mode!] ?? 'unknown'}), the route back to ${drop.packet.src}: ${cause.route.text}`
        : `IP_RPFILTER on ${drop.iface}`,
    },
    packet: drop.packet,
    reason: sentences.join(' '),
    ...(evidence.length ? { evidence } : {}),
  };
}

export const rpFilterDrop: Detector = { name: 'rp-filter-drop', detect };
