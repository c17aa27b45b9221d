// Names the culprit of a faulted or failing probe from what it observed and what its trace recorded:
// the rule that dropped the packet (on whichever node it reached, under the address a NAT gave it), the
// BPF program that rewrote it, the kernel path that skipped netfilter or checked the reverse path, the
// socket that refused it, or, when nothing dropped it, the NAT rule that changed what it observed; with the
// packet, a few sentences an expert would say, the state behind the culprit, and the path the packets took.
// Each way a probe fails is a detector of its own (detectors/), tried in order. Pure: unit-tested on
// recorded traces (test/unit/diagnosis.test.ts).
import type { Diagnosis } from '../../model/diagnosis.ts';
import { ProbeFlow } from '../../model/probe-flow.ts';
import type { TraceEvent, TracePacket } from '../../model/trace-events.ts';
import { parseTcpdumpLine, type Packet } from '../probes/packet-watch.ts';
import { bridgedReply } from './detectors/bridged-reply.ts';
import { type Ctx, type Detector, type DiagnosisInput, clientRef } from './detectors/detector.ts';
import { closedPort } from './detectors/closed-port.ts';
import { forwardingOff } from './detectors/forwarding-off.ts';
import { gatewayDrop } from './detectors/gateway-drop.ts';
import { goneDestination } from './detectors/gone-destination.ts';
import { hairpinDrop } from './detectors/hairpin-drop.ts';
import { invalidUnNated } from './detectors/invalid-un-nated.ts';
import { kernelDrop } from './detectors/kernel-drop.ts';
import { localnetReroute } from './detectors/localnet-reroute.ts';
import { natRewrite } from './detectors/nat-rewrite.ts';
import { replyBypass } from './detectors/reply-bypass.ts';
import { routeLookupFailed } from './detectors/route-lookup.ts';
import { rpFilterDrop } from './detectors/rp-filter-drop.ts';
import { ruleDrop } from './detectors/rule-drop.ts';
import { socketLbRewrite } from './detectors/socket-lb-rewrite.ts';
import { buildPath } from './packet-path.ts';

export type { Diagnosis, DiagnosisInput };

/**
 * The detectors, most specific first: a rule's verdict or a program's rewrite names its culprit exactly; a
 * NAT that changed an answered probe's view comes before any other kernel drop, which an answer outweighs.
 */
const DETECTORS: readonly Detector[] = [
  ruleDrop,
  socketLbRewrite,
  hairpinDrop,
  closedPort,
  invalidUnNated,
  replyBypass,
  bridgedReply,
  rpFilterDrop,
  gatewayDrop,
  forwardingOff,
  natRewrite,
  localnetReroute,
  goneDestination,
  kernelDrop,
  routeLookupFailed,
];

/** Where the probe sent to, from its summary (`client -> 10.96.0.20:80 = ...`). */
export function probeTarget(summary: string): { ip: string; port: number } | undefined {
  const m = /-> ([\d.]+):(\d+) =/.exec(summary);
  return m ? { ip: m[1]!, port: Number(m[2]) } : undefined;
}

const clientPackets = (probe: DiagnosisInput['probe']): Packet[] =>
  ((probe.detail.packets as string[] | undefined) ?? []).flatMap((l) => parseTcpdumpLine(l) ?? []);

export function diagnose(input: DiagnosisInput): Diagnosis | undefined {
  const target = input.trace.flows?.target ?? probeTarget(input.probe.summary);
  if (!target) return undefined;
  const packets = clientPackets(input.probe);
  const client = input.trace.flows?.client ?? clientAddress(input, packets, target);
  if (!client) return undefined;
  const flow = ProbeFlow.of(client, input.trace.events);
  const ctx: Ctx = {
    ...input,
    target,
    client,
    flow,
    packets,
    events: ownConnections(input.trace.events, flow, packets),
    facts: input.trace.facts,
  };
  for (const detector of DETECTORS) {
    const found = detector.detect(ctx);
    if (found)
      return {
        ...found,
        path: buildPath({
          client,
          clientRef: clientRef(input.probe.summary),
          target,
          packets,
          trace: input.trace,
          culprit: found,
        }),
      };
  }
  return undefined;
}

/**
 * The trace covers the client's address, so it may also hold an earlier probe's connection still
 * retransmitting (its curl stopped, its socket lingering): keep TCP events of the connections this
 * probe opened (its SYNs on the client's interface), when it opened any.
 */
function ownConnections(events: TraceEvent[], flow: ProbeFlow, packets: Packet[]): TraceEvent[] {
  const ports = new Set(packets.filter((p) => p.src === flow.client && p.flags === 'S').map((p) => p.sport));
  if (ports.size === 0) return events;
  // a packet a NAT made of the client's counts for the client's port it stands for
  const port = (p: TracePacket) => flow.clientPort(p);
  return events.filter(
    (e) =>
      e.packet.proto !== 'tcp' ||
      ports.has(port(e.packet) ?? -1) ||
      (e.kind === 'conntrack' && ports.has(port(e.reply) ?? -1)),
  );
}

/** The client opens every probe's exchange: the first packet on its interface is its own. */
function clientAddress(
  input: DiagnosisInput,
  packets: Packet[],
  target: { ip: string; port: number },
): string | undefined {
  if (packets[0]) return packets[0].src;
  const traced = input.trace.events.find((e) => e.kind !== 'conntrack' && e.packet.dst === target.ip);
  return traced && traced.kind !== 'conntrack' ? traced.packet.src : undefined;
}
