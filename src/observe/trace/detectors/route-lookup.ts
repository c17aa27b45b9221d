// connect() failed in the client before any packet existed: its route lookup found no route (ENETUNREACH) or an
// unreachable one (EHOSTUNREACH). A locally generated packet is routed when connect() picks its source address,
// for the address the socket was given (a ClusterIP before nat OUTPUT's DNAT), so only a route covering that
// address helps. The lookup and the table, read in the client's namespace right after (http.ts), say which.
import type { StateRead } from '../../../model/diagnosis.ts';
import { type Ctx, type Detector, type Found, clientRef, endpoint } from './detector.ts';

/** What the probe read of the client's routing right after connect() failed: `ip -4 route get` and the table. */
export interface RouteLookup {
  get: { command: string; output: string };
  table: { command: string; output: string };
}

/** The errnos of a connect() whose route lookup failed: no route, or an unreachable one. */
export const ROUTING_ERRNOS: ReadonlySet<string> = new Set(['ENETUNREACH', 'EHOSTUNREACH']);

function detect(ctx: Ctx): Found | undefined {
  const errno = ctx.probe.detail.connectErrno;
  if (typeof errno !== 'string' || !ROUTING_ERRNOS.has(errno)) return undefined;
  if (ctx.packets.some((p) => p.src === ctx.client)) return undefined;
  const where = clientRef(ctx.probe.summary);
  const lookup = ctx.probe.detail.routeLookup as RouteLookup | undefined;
  const to = endpoint(ctx.target.ip, ctx.target.port);
  const sentences = [
    `connect() in ${where} to ${to} failed with ${errno} before any packet existed: the kernel routes a locally generated packet when connect() picks its source address, for the address the socket was given (a ClusterIP is rewritten by nat OUTPUT only after that lookup).`,
  ];
  const evidence: StateRead[] = [];
  if (lookup) {
    const answer = lookup.get.output.trim() || '(nothing)';
    const table = lookup.table.output.trim();
    const uncovered = /^default /m.test(table)
      ? ''
      : `: its table has no default route, and no route in it covers ${ctx.target.ip}`;
    sentences.push(`\`${lookup.get.command}\` in ${where} answers \`${answer}\`${uncovered}.`);
    evidence.push({ where, ...lookup.get }, { where, ...lookup.table });
  }
  return {
    culprit: {
      kind: 'kernel',
      node: where,
      where: 'route lookup at connect()',
      text: `${errno}: no usable route to ${ctx.target.ip}${lookup ? ` (${lookup.get.output.trim().split('\n')[0]})` : ''}`,
    },
    packet: { proto: 'tcp', src: ctx.client, dst: ctx.target.ip, dport: ctx.target.port, flags: 'SYN' },
    reason: sentences.join(' '),
    ...(evidence.length ? { evidence } : {}),
  };
}

export const routeLookupFailed: Detector = { name: 'route-lookup', detect };
