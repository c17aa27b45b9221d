// A connection from 127.0.0.1 that a DNAT sent to another machine (a hostPort bound to 127.0.0.1, a NodePort on
// localhost) is routed again after nat OUTPUT rewrote it; the kernel lets a loopback source leave a device only
// where route_localnet is on (for that device, or all), so the re-route fails and netfilter's hook drops the
// packet (NETFILTER_DROP, with no rule's verdict). The routing table and the settings, read with the trace, say
// which device and which setting.
import type { StateRead } from '../../../model/diagnosis.ts';
import type { TraceFact } from '../../../model/trace-events.ts';
import { type Ctx, type Detector, type Drop, type Found, showPacket } from './detector.ts';
import { coveringRoutes } from './gateway-drop.ts';

const loopback = (ip: string) => ip.startsWith('127.');

function detect(ctx: Ctx): Found | undefined {
  const drop = ctx.events.find(
    (e): e is Drop =>
      e.kind === 'drop' &&
      e.reason === 'NETFILTER_DROP' &&
      loopback(e.packet.src) &&
      !loopback(e.packet.dst) &&
      ctx.flow.concerns(e.packet),
  );
  // a rule's DROP is a rule's story, not the re-route's
  if (!drop || ctx.events.some((e) => e.kind === 'rule' && e.verdict === 'DROP')) return undefined;
  const node = drop.where.replace(/^node\//, '');
  const settings = new Map(
    ctx.facts
      .filter((f): f is Extract<TraceFact, { kind: 'setting' }> => f.kind === 'setting' && f.node === node)
      .map((f) => [f.name, f.value]),
  );
  const routes = ctx.facts.find(
    (f): f is Extract<TraceFact, { kind: 'routes' }> => f.kind === 'routes' && f.node === node,
  );
  const route = routes ? coveringRoutes(routes.table, drop.packet.dst)[0] : undefined;
  const dev = / dev (\S+)/.exec(route ?? '')?.[1];
  const all = settings.get('net.ipv4.conf.all.route_localnet');
  const own = dev ? settings.get(`net.ipv4.conf.${dev}.route_localnet`) : undefined;
  const read = [
    ...(all === undefined ? [] : [`net.ipv4.conf.all.route_localnet = ${all}`]),
    ...(own === undefined ? [] : [`net.ipv4.conf.${dev}.route_localnet = ${own}`]),
  ];
  const sentences = [
    `${drop.where} dropped ${showPacket(drop.packet)} in netfilter's hook (NETFILTER_DROP in ${drop.location}) with no rule's verdict: a DNAT in nat OUTPUT had sent the connection from 127.0.0.1 to ${drop.packet.dst}, and routing it again after the rewrite${dev ? ` (out ${dev}: \`${route}\`)` : ''} refuses a loopback source on a device without route_localnet.`,
  ];
  if (read.length > 0) sentences.push(`Read on ${node}: ${read.join(', ')}.`);
  sentences.push(
    'kube-proxy turns net.ipv4.conf.all.route_localnet on as it starts (localhost NodePorts), portmap on the bridge of a pod with a hostPort on 127.0.0.1.',
  );
  const evidence: StateRead[] = [
    ...(read.length > 0 ? [{ where: drop.where, command: 'sysctl', output: read.join('\n') }] : []),
    ...(routes ? [{ where: drop.where, command: 'ip -4 route show', output: routes.table }] : []),
  ];
  return {
    culprit: {
      kind: 'kernel',
      node: drop.where,
      where: `route_localnet${dev ? ` on ${dev}` : ''}`,
      text: read.length > 0 ? read.join(', ') : 'a loopback source refused after the DNAT',
    },
    packet: drop.packet,
    reason: sentences.join(' '),
    evidence,
  };
}

export const localnetReroute: Detector = { name: 'localnet-reroute', detect };
