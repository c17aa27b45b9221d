// A node routed the client's packet to the nodes' default gateway, which knows no pod or Service address: the
// node had no route of its own for the destination (a missing pod-subnet route, a ClusterIP left un-DNATed),
// so the packet left by the route that covers everything. The gateway (the lab's fabric, as a real network's
// router) drops it in ip_error and sends nothing back. Told from the node's routing table, read with the trace.
import type { StateRead } from '../../../model/diagnosis.ts';
import { cidrContains } from '../../../model/scenario-references.ts';
import type { TraceFact } from '../../../model/trace-events.ts';
import {
  type Conntrack,
  type Ctx,
  type Detector,
  type Drop,
  type Found,
  type Rule,
  flowPacketWords,
} from './detector.ts';

/** Where the nodes' default route leads in the lab: the fabric namespace. */
const GATEWAY = 'fabric';

function detect(ctx: Ctx): Found | undefined {
  const drop = ctx.events.find(
    (e): e is Drop =>
      e.kind === 'drop' && e.where === GATEWAY && e.reason === 'IP_INADDRERRORS' && ctx.flow.concerns(e.packet),
  );
  if (!drop) return undefined;
  // the node that sent it: the last one whose POSTROUTING saw the packet leave, by which interface
  const sent = ctx.events
    .filter(
      (e): e is Rule =>
        e.kind === 'rule' &&
        e.chain === 'POSTROUTING' &&
        e.oif !== undefined &&
        e.packet.dst === drop.packet.dst &&
        e.packet.dport === drop.packet.dport,
    )
    .at(-1);
  // a reply is not traced rule by rule: the node whose conntrack saw it go out forwarded it
  const replied = ctx.events
    .filter(
      (e): e is Conntrack =>
        e.kind === 'conntrack' && e.reply.src === drop.packet.src && e.reply.dst === drop.packet.dst && !e.unreplied,
    )
    .at(-1);
  const node = sent?.node ?? replied?.node;
  if (!node) return undefined;
  const dst = drop.packet.dst;
  const routes = ctx.facts.find(
    (f): f is Extract<TraceFact, { kind: 'routes' }> => f.kind === 'routes' && f.node === node,
  );
  // the route the lookup took: the longest prefix that holds the destination
  const used = routes ? coveringRoutes(routes.table, dst)[0] : undefined;
  const byDefault = used?.startsWith('default ') === true;
  const sentences = [
    `${node} routed ${flowPacketWords(ctx, drop.packet)}${sent?.oif ? ` out ${sent.oif}` : ''} to the nodes' default gateway, which routes no pod or Service address: it dropped it (IP_INADDRERRORS in ${drop.location}) and sent nothing back, so the sender retransmits into the same drop.`,
  ];
  if (byDefault)
    sentences.push(
      `${node}'s table has no route for ${dst} but its default route (\`${used}\`): nothing on ${node} routes ${dst} elsewhere (a pod subnet's route) or rewrites it first (a Service's DNAT).`,
    );
  else if (used) sentences.push(`${node}'s route for ${dst} is \`${used}\`, which leads to the gateway.`);
  const evidence: StateRead[] = routes
    ? [{ where: `node/${node}`, command: 'ip -4 route show', output: routes.table }]
    : [];
  return {
    culprit: {
      kind: 'kernel',
      node: `node/${node}`,
      where: `route to ${dst}`,
      text: byDefault
        ? `no route for ${dst}: sent by the default route to the gateway, which dropped it`
        : `${dst} routed to the gateway, which dropped it`,
    },
    packet: drop.packet,
    reason: sentences.join(' '),
    evidence,
  };
}

/** The routes of `ip -4 route show` whose destination holds `ip`, longest prefix first (`default` last). */
export function coveringRoutes(table: string, ip: string): string[] {
  const prefix = (line: string) => {
    const dest = line.split(' ')[0] ?? '';
    if (dest === 'default') return 0;
    const cidr = dest.includes('/') ? dest : `${dest}/32`;
    return cidrContains(cidr, `${ip}/32`) ? Number(cidr.split('/')[1]) : -1;
  };
  return table
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^(broadcast|local|unreachable|prohibit|blackhole) /.test(l))
    .map((l) => ({ l, len: prefix(l) }))
    .filter((r) => r.len >= 0)
    .sort((a, b) => b.len - a.len)
    .map((r) => r.l);
}

export const gatewayDrop: Detector = { name: 'gateway-drop', detect };
