// conntrack marked a packet of the flow INVALID, so it skipped the reverse NAT and reached the client with
// the pod's address (the forged segment of the injector, where one ran).
import type { CheckResult } from '../../expect/run-checks.ts';
import { type Ctx, type Detector, endpoint, type Found, type Rule, showPacket } from './detector.ts';

/** conntrack's own words for an INVALID packet, from a check that captured its log (nflog). */
function conntrackLog(checks: readonly CheckResult[]): string | undefined {
  for (const c of checks) {
    const line = c.evidence.find((l) => /nf_ct_proto_\d+: .*(SEQ|ACK|invalid|INVALID)/.test(l));
    if (line) return /nf_ct_proto_\d+: ([^\n]*?)(?:\s+IN=|$)/.exec(line)?.[1]?.trim() ?? line.trim();
  }
  return undefined;
}

interface Injected {
  src: string;
  sport: number;
  dst: string;
  dport: number;
  liveSeq: number;
  forgedSeq: number;
  ahead?: number;
  forgedFlags?: string;
}

/** The injector's JSON line: a background step's output (or, in older reports, the probe's `during`). */
function injectorOutput(ctx: Ctx): Injected | undefined {
  const parse = (text: unknown): unknown => {
    if (typeof text !== 'string') return text;
    for (const line of text.split('\n').reverse()) {
      try {
        return JSON.parse(line);
      } catch {}
    }
    return undefined;
  };
  const outputs = [
    ...(ctx.steps ?? []).flatMap((s) => [s.evidence, s.output]),
    ...((ctx.probe.detail.during as { output?: unknown }[] | undefined) ?? []).map((d) => d.output),
  ];
  return outputs
    .map(parse)
    .find((o): o is Injected => Boolean(o) && typeof o === 'object' && 'forgedSeq' in (o as object));
}

/** A packet conntrack marked INVALID reached the client un-NATed (the source still the pod IP). */
function detect(ctx: Ctx): Found | undefined {
  // a segment or datagram of the flow: an ICMP error about it comes from whoever sent it (a node that could not
  // deliver it), not un-NATed
  const invalid = ctx.events.find(
    (e): e is Rule =>
      e.kind === 'rule' &&
      e.table === 'mangle' &&
      e.packet.dst === ctx.client &&
      (e.packet.proto === 'tcp' || e.packet.proto === 'udp') &&
      (e.packet.src !== ctx.target.ip || e.packet.sport !== ctx.target.port),
  );
  if (!invalid) return undefined;
  // a reply is traced before its reverse NAT (that comes at POSTROUTING): only the client's capture tells whether
  // it arrived un-NATed; one that arrived from the Service's address was NATed back as it should be
  const fromTarget = ctx.packets.some(
    (p) => p.dst === ctx.client && p.src === ctx.target.ip && p.sport === ctx.target.port && p.proto === 'tcp',
  );
  const unNated = ctx.packets.some((p) => p.dst === ctx.client && p.src === invalid.packet.src);
  if (fromTarget && !unNated) return undefined;
  const forwarded = ctx.events.find(
    (e): e is Rule => e.kind === 'rule' && e.id === invalid.id && e.table === 'filter' && /ACCEPT/.test(e.verdict),
  );
  const reset = ctx.packets.find(
    (p) => p.src === ctx.client && p.dst === invalid.packet.src && p.flags?.startsWith('R'),
  );
  const log = conntrackLog(ctx.checks);
  const injected = injectorOutput(ctx);
  const from = endpoint(invalid.packet.src, invalid.packet.sport);
  const sentences = [
    `conntrack on ${invalid.node} marked the segment ${showPacket(invalid.packet)} INVALID${log ? ` ("${log}")` : ''}, so it skipped the reverse NAT and kept the pod IP ${invalid.packet.src} as its source.`,
  ];
  if (injected)
    sentences.push(
      `It is the forged segment: seq ${injected.forgedSeq}, ${injected.ahead ? `${injected.ahead} bytes ahead of` : 'off'} the live seq ${injected.liveSeq} (${injected.forgedFlags ?? 'injected'} from ${injected.src}:${injected.sport}).`,
    );
  sentences.push(
    `${forwarded ? `${invalid.node} forwarded it (${forwarded.table}/${forwarded.chain} ${forwarded.verdict})` : 'It was forwarded'} and the un-NATed packet reached the client${reset ? `, which answered RST to ${from}: that RST reset the connection` : ''}.`,
  );
  return {
    culprit: {
      kind: 'kernel',
      node: invalid.node,
      where: 'conntrack (INVALID: no reverse NAT)',
      text: log ?? 'ctstate INVALID',
    },
    packet: invalid.packet,
    reason: sentences.join(' '),
  };
}

export const invalidUnNated: Detector = { name: 'invalid-un-nated', detect };
