// Names the culprit of a faulted or failing probe from what it observed and what its trace recorded:
// the rule that dropped the packet, the BPF program that rewrote it, the kernel path that skipped
// netfilter, or the socket that refused it; with the packet, a few sentences an expert would say,
// and the path the packets took. Pure: unit-tested on recorded traces (test/unit/diagnosis.test.ts).
import type { Diagnosis } from '../../model/diagnosis.ts';
import { concernsClient, type ProbeTraceResult, type TraceEvent, type TraceFact, type TracePacket } from '../../model/trace-events.ts';
import type { CheckResult } from '../expect/run-checks.ts';
import { parseTcpdumpLine, type Packet } from '../probes/packet-watch.ts';
import { packetWords } from './drop-verdict.ts';
import { buildPath } from './packet-path.ts';

export type { Diagnosis };

/** What the diagnosis reads: the probe as observed, its phase's checks and steps, and its trace. */
export interface DiagnosisInput {
  probe: { id: string; observed: string; summary: string; detail: Record<string, unknown> };
  phase: string;
  checks: readonly CheckResult[];
  /** The phase's steps: a background step's output can name what it injected. */
  steps?: readonly { evidence?: string; output?: string }[];
  trace: ProbeTraceResult;
  address?: (ref: string) => string;
}

type Rule = Extract<TraceEvent, { kind: 'rule' }>;
type Drop = Extract<TraceEvent, { kind: 'drop' }>;
type Conntrack = Extract<TraceEvent, { kind: 'conntrack' }>;

export const showPacket = packetWords;
/** `-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP`: the rule as iptables-save prints it. */
const ruleText = (r: Rule) => (r.rule ?? `${r.chain} policy`).replace(/^-4 -t \S+ /, '');
const endpoint = (ip: string, port?: number) => (port === undefined ? ip : `${ip}:${port}`);
const ordinal = (n: number) => `${n}${n === 1 ? 'st' : n === 2 ? 'nd' : n === 3 ? 'rd' : 'th'}`;

/** Where the probe sent to, from its summary (`client -> 10.96.0.20:80 = ...`). */
export function probeTarget(summary: string): { ip: string; port: number } | undefined {
  const m = /-> ([\d.]+):(\d+) =/.exec(summary);
  return m ? { ip: m[1]!, port: Number(m[2]) } : undefined;
}

const clientPackets = (probe: DiagnosisInput['probe']): Packet[] => ((probe.detail.packets as string[] | undefined) ?? []).flatMap((l) => parseTcpdumpLine(l) ?? []);

export function diagnose(input: DiagnosisInput): Diagnosis | undefined {
  const target = input.trace.flows?.target ?? probeTarget(input.probe.summary);
  if (!target) return undefined;
  const packets = clientPackets(input.probe);
  const client = input.trace.flows?.client ?? clientAddress(input, packets, target);
  if (!client) return undefined;
  const ctx: Ctx = { ...input, target, client, packets, events: ownConnections(input.trace.events, client, packets), facts: input.trace.facts };
  const found = ruleDrop(ctx) ?? socketLbRewrite(ctx) ?? hairpinDrop(ctx) ?? invalidUnNated(ctx) ?? bridgedReply(ctx) ?? kernelDrop(ctx);
  if (!found) return undefined;
  return { ...found, path: buildPath({ client, target, packets, trace: input.trace, culprit: found }) };
}

/**
 * The trace covers the client's address, so it may also hold an earlier probe's connection still
 * retransmitting (its curl stopped, its socket lingering): keep TCP events of the connections this
 * probe opened (its SYNs on the client's interface), when it opened any.
 */
function ownConnections(events: TraceEvent[], client: string, packets: Packet[]): TraceEvent[] {
  const ports = new Set(packets.filter((p) => p.src === client && p.flags === 'S').map((p) => p.sport));
  if (ports.size === 0) return events;
  const port = (p: TracePacket) => (p.src === client ? p.sport : p.dst === client ? p.dport : undefined);
  return events.filter((e) => e.packet.proto !== 'tcp' || ports.has(port(e.packet) ?? -1) || (e.kind === 'conntrack' && ports.has(port(e.reply) ?? -1)));
}

interface Ctx extends DiagnosisInput {
  target: { ip: string; port: number };
  client: string;
  packets: Packet[];
  events: TraceEvent[];
  facts: TraceFact[];
}

type Found = Omit<Diagnosis, 'path'>;

/** The client opens every probe's exchange: the first packet on its interface is its own. */
function clientAddress(input: DiagnosisInput, packets: Packet[], target: { ip: string; port: number }): string | undefined {
  if (packets[0]) return packets[0].src;
  const traced = input.trace.events.find((e) => e.kind !== 'conntrack' && e.packet.dst === target.ip);
  return traced && traced.kind !== 'conntrack' ? traced.packet.src : undefined;
}

/** The conntrack entry of the client's flow on `node`, as last reported. */
function lastConntrack(ctx: Ctx, node: string): Conntrack | undefined {
  return ctx.events.filter((e): e is Conntrack => e.kind === 'conntrack' && e.node === node && e.packet.src === ctx.client && e.packet.dst === ctx.target.ip).at(-1);
}

const ctState = (c: Conntrack) => `${c.state ?? (c.unreplied ? 'NEW' : 'ESTABLISHED')}${c.unreplied ? ' [UNREPLIED]' : ''}`;

/** A netfilter rule dropped (or rejected) a packet of this flow. */
function ruleDrop(ctx: Ctx): Found | undefined {
  const drop = ctx.events.find((e): e is Rule => e.kind === 'rule' && (e.verdict === 'DROP' || e.verdict === 'REJECT') && concernsClient(e.packet, ctx.client));
  if (!drop) return undefined;
  const text = ruleText(drop);
  const about = drop.packet.inner;
  const sentences = [
    about
      ? `${drop.node}'s rule \`${text}\` (${drop.table}/${drop.chain}) dropped the ICMP error ${showPacket({ ...drop.packet, inner: undefined })} that ${drop.node} sent ${drop.packet.dst} about its packet ${showPacket(about)} to the client.`
      : `${drop.node}'s rule \`${text}\` (${drop.table}/${drop.chain}) dropped the client's packet ${showPacket(drop.packet)}.`,
  ];
  if (about && drop.packet.icmp?.type === 3 && drop.packet.icmp.code === 4) {
    const tooBig = ctx.events.filter((e): e is Drop => e.kind === 'drop' && e.reason === 'PKT_TOO_BIG' && e.packet.src === about.src && e.packet.dst === about.dst);
    sentences.push(
      `${about.src} never learns the path MTU${drop.packet.icmp.mtu ? ` (${drop.packet.icmp.mtu})` : ''}, so it keeps sending full-size segments` +
        (tooBig[0] ? `, which ${tooBig[0].where} drops (${tooBig.reduce((n, e) => n + (e.repeat ?? 1), 0)}× PKT_TOO_BIG in ${tooBig[0].location} on ${tooBig[0].iface})` : '') +
        ': an MTU black hole (the handshake and small packets pass, the transfer hangs).',
    );
  }
  if (/INVALID/.test(text)) {
    const ct = lastConntrack(ctx, drop.node);
    const synAck = ctx.packets.find((p) => p.dst === ctx.client && p.flags?.startsWith('S.'));
    if (ct) {
      sentences.push(
        `conntrack on ${drop.node} still held the connection in ${ctState(ct)}` +
          (synAck ? `, although the client had received the SYN-ACK from ${endpoint(synAck.src, synAck.sport)}: the node's conntrack never saw that reply, so the client's next packet was INVALID there.` : ': it never saw a reply, so the next packet was INVALID.'),
      );
    }
    const tc = ctx.facts.find((f): f is Extract<TraceFact, { kind: 'tc-program' }> => f.kind === 'tc-program' && f.node === drop.node && f.hook === 'ingress');
    if (tc && synAck) sentences.push(`The SYN-ACK was handled by the tc program ${tc.name} (id ${tc.id}) on ${drop.node} ${tc.dev} ingress, which reverse-SNATs replies and redirects them to the pod past netfilter.`);
  }
  return { culprit: { kind: 'rule', node: drop.node, where: `${drop.table}/${drop.chain}`, text }, packet: drop.packet, reason: sentences.join(' ') };
}

/** connect() (or a UDP sendmsg()) to the service was rewritten by a cgroup program to somewhere else (socket LB). */
function socketLbRewrite(ctx: Ctx): Found | undefined {
  const syn = ctx.packets.find((p) => p.src === ctx.client && (p.flags === 'S' || p.proto === 'udp'));
  if (!syn || (syn.dst === ctx.target.ip && syn.dport === ctx.target.port)) return undefined;
  const sentTo = endpoint(syn.dst, syn.dport);
  const frontend = endpoint(ctx.target.ip, ctx.target.port);
  const all = ctx.facts.filter((f): f is Extract<TraceFact, { kind: 'cgroup-program' }> => f.kind === 'cgroup-program').sort((a, b) => a.order - b.order);
  // the hook that rewrote it: connect4 for TCP (and connected UDP), sendmsg4 for UDP otherwise
  const rewrites = (p: (typeof all)[number]) => p.mappings.some((m) => m.frontend === frontend && m.backends.includes(sentTo));
  const culprit = all.find((p) => rewrites(p) && (syn.proto === 'tcp' ? /connect/.test(p.attach) : /sendmsg/.test(p.attach))) ?? all.find(rewrites);
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
    culprit: { kind: 'bpf-program', node: culprit.node, where: `${culprit.attach} ${culprit.cgroup} (${ordinal(culprit.order)} of ${culprit.of})`, text: `${culprit.name} id ${culprit.id}: ${frontend} -> ${sentTo}` },
    packet: { proto: syn.proto, src: syn.src, dst: syn.dst, sport: syn.sport, dport: syn.dport, flags: syn.proto === 'tcp' ? 'SYN' : undefined },
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
  const failed = ctx.events.find((e): e is Drop => e.kind === 'drop' && e.reason === 'NEIGH_FAILED' && e.packet.src === ctx.client && e.packet.dst === sent.dst);
  const icmp = ctx.packets.find((p) => p.dst === ctx.client && p.icmp?.about === sent.dst);
  const answered = icmp?.icmp ? ` and answered the client with ICMP ${icmp.icmp.name} from ${icmp.src}` : '';
  if (!failed) return icmp?.icmp ? `The ${what} went to ${to}; ICMP ${icmp.icmp.name} from ${icmp.src} answered it.` : `The ${what} went to ${to} and was never answered.`;
  const node = failed.where.replace(/^node\//, '');
  const neighbour = failed.cause?.kind === 'neighbour' ? `its ARP for ${failed.cause.neighbour} on ${failed.iface} got no answer (${failed.cause.state} in its neighbour table)` : `its neighbour resolution on ${failed.iface} failed`;
  return `The ${what} went to ${to}, which nobody holds: ${node} queued it while ${neighbour}, then dropped it (NEIGH_FAILED in ${failed.location})${answered}.`;
}

/** A bridge port with hairpin off got a frame back for the MAC behind itself: the bridge dropped it (kernel state read at the drop). */
function hairpinDrop(ctx: Ctx): Found | undefined {
  const drop = ctx.events.find((e): e is Drop & { cause: { kind: 'hairpin-off' } } => e.kind === 'drop' && e.cause?.kind === 'hairpin-off' && concernsClient(e.packet, ctx.client));
  if (!drop) return undefined;
  const { bridge, port, mac } = drop.cause;
  const node = drop.where.replace(/^node\//, '');
  const dnat = ctx.events.find((e): e is Rule => e.kind === 'rule' && e.table === 'nat' && /-j DNAT/.test(e.rule ?? ''));
  const to = endpoint(drop.packet.dst, drop.packet.dport);
  const sentences = [
    `${dnat ? `The SYN to ${endpoint(ctx.target.ip, ctx.target.port)} was DNATed on ${dnat.node} by ${dnat.table}/${dnat.chain} to ${to}` : `The SYN was sent on to ${to}`}${drop.packet.dst === ctx.client ? ', the client itself' : ''}.`,
    `The bridge ${bridge} would have to send it back out ${port}, the port it came in on: its destination ${mac} is behind that port in ${bridge}'s FDB, and the port's hairpin mode is off, so ${node} dropped it (${drop.reason} at ${drop.location}).`,
    'Every retransmission meets the same port: the connection hangs.',
  ];
  return {
    culprit: { kind: 'kernel', node: drop.where, where: `${port} on bridge ${bridge} (hairpin off)`, text: `${showPacket(drop.packet)} not sent back out its ingress port ${port}` },
    packet: drop.packet,
    reason: sentences.join(' '),
  };
}

/** `cgroup_inet4_connect` -> `connect4`, `cgroup_udp4_sendmsg` -> `sendmsg4`. */
const hookName = (attach: string) => attach.replace(/^cgroup_(inet|udp)4_(\w+)$/, '$24');

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
  const outputs = [...(ctx.steps ?? []).flatMap((s) => [s.evidence, s.output]), ...((ctx.probe.detail.during as { output?: unknown }[] | undefined) ?? []).map((d) => d.output)];
  return outputs.map(parse).find((o): o is Injected => Boolean(o) && typeof o === 'object' && 'forgedSeq' in (o as object));
}

/** A packet conntrack marked INVALID reached the client un-NATed (the source still the pod IP). */
function invalidUnNated(ctx: Ctx): Found | undefined {
  const invalid = ctx.events.find(
    (e): e is Rule => e.kind === 'rule' && e.table === 'mangle' && e.packet.dst === ctx.client && (e.packet.src !== ctx.target.ip || e.packet.sport !== ctx.target.port),
  );
  if (!invalid) return undefined;
  const forwarded = ctx.events.find((e): e is Rule => e.kind === 'rule' && e.id === invalid.id && e.table === 'filter' && /ACCEPT/.test(e.verdict));
  const reset = ctx.packets.find((p) => p.src === ctx.client && p.dst === invalid.packet.src && p.flags?.startsWith('R'));
  const log = conntrackLog(ctx.checks);
  const injected = injectorOutput(ctx);
  const from = endpoint(invalid.packet.src, invalid.packet.sport);
  const sentences = [
    `conntrack on ${invalid.node} marked the segment ${showPacket(invalid.packet)} INVALID${log ? ` ("${log}")` : ''}, so it skipped the reverse NAT and kept the pod IP ${invalid.packet.src} as its source.`,
  ];
  if (injected) sentences.push(`It is the forged segment: seq ${injected.forgedSeq}, ${injected.ahead ? `${injected.ahead} bytes ahead of` : 'off'} the live seq ${injected.liveSeq} (${injected.forgedFlags ?? 'injected'} from ${injected.src}:${injected.sport}).`);
  sentences.push(`${forwarded ? `${invalid.node} forwarded it (${forwarded.table}/${forwarded.chain} ${forwarded.verdict})` : 'It was forwarded'} and the un-NATed packet reached the client${reset ? `, which answered RST to ${from}: that RST reset the connection` : ''}.`);
  return {
    culprit: { kind: 'kernel', node: invalid.node, where: 'conntrack (INVALID: no reverse NAT)', text: log ?? 'ctstate INVALID' },
    packet: invalid.packet,
    reason: sentences.join(' '),
  };
}

/** A reply reached the client from the backend's own address without passing the node's netfilter (bridged). */
function bridgedReply(ctx: Ctx): Found | undefined {
  const reply =
    ctx.packets.find((p) => p.dst === ctx.client && (p.src !== ctx.target.ip || p.sport !== ctx.target.port) && (p.proto === 'udp' || p.flags?.startsWith('S.'))) ??
    undefined;
  const socketDrop = ctx.events.find((e): e is Drop => e.kind === 'drop' && e.where.startsWith('pod/') && e.packet.dst === ctx.client && (e.packet.src !== ctx.target.ip || e.packet.sport !== ctx.target.port));
  const packet: TracePacket | undefined = reply ? { proto: reply.proto, src: reply.src, dst: reply.dst, sport: reply.sport, dport: reply.dport, flags: reply.flags === 'S.' ? 'SYN ACK' : reply.flags } : socketDrop?.packet;
  if (!packet) return undefined;
  const ct = ctx.events.find((e): e is Conntrack => e.kind === 'conntrack' && e.packet.src === ctx.client && e.packet.dst === ctx.target.ip && e.reply.src === packet.src);
  const node = ct?.node ?? ctx.facts.find((f) => f.kind === 'setting')?.node ?? '';
  const bridgeOff = ctx.facts.find((f) => f.kind === 'setting' && f.node === node && f.name === 'net.bridge.bridge-nf-call-iptables' && f.value === '0');
  const throughNetfilter = ctx.events.some((e) => e.kind === 'rule' && e.packet.src === packet.src && e.packet.dst === ctx.client);
  if (throughNetfilter) return undefined;
  const dnat = ctx.events.find((e): e is Rule => e.kind === 'rule' && e.table === 'nat' && /-j DNAT/.test(e.rule ?? ''));
  const what = packet.proto === 'udp' ? 'reply' : 'SYN-ACK';
  const from = endpoint(packet.src, packet.sport);
  const sentences = [
    `${dnat ? `The ${packet.proto === 'udp' ? 'query' : 'SYN'} to ${endpoint(ctx.target.ip, ctx.target.port)} was DNATed on ${dnat.node} by ${dnat.table}/${dnat.chain} to ${from}; the` : 'The'} ${what} from ${from} was bridged ${bridgeOff ? `on ${node} with net.bridge.bridge-nf-call-iptables=0 ` : ''}without passing the nat table, so it was never reverse-NATed and kept the pod IP as its source.`,
  ];
  if (ct) sentences.push(`conntrack on ${ct.node} still shows the connection ${ctState(ct)}: it never saw the ${what}.`);
  const rst = ctx.packets.find((p) => p.src === ctx.client && p.dst === packet.src && p.flags?.startsWith('R'));
  if (rst) sentences.push(`The client answered RST to ${from}, a peer it never contacted.`);
  if (packet.proto === 'udp' && socketDrop) {
    sentences.push(`The client's UDP socket, connected to ${endpoint(ctx.target.ip, ctx.target.port)}, did not match the reply, so the kernel dropped it (${socketDrop.reason} in ${socketDrop.location}).`);
    return {
      culprit: { kind: 'socket', node: socketDrop.where, where: `udp socket connected to ${endpoint(ctx.target.ip, ctx.target.port)}`, text: `${socketDrop.reason} at ${socketDrop.location} (${socketDrop.iface})` },
      packet,
      reason: sentences.join(' '),
    };
  }
  if (packet.proto === 'udp') sentences.push(`The client's resolver socket is not connected, so it accepted the reply and named its wrong source.`);
  return {
    culprit: { kind: 'kernel', node, where: bridgeOff ? `bridge (net.bridge.bridge-nf-call-iptables=0)` : 'bridge (no netfilter on the reply path)', text: `${what} ${from} > ${endpoint(ctx.client, packet.dport)} bridged past conntrack: no reverse NAT` },
    packet,
    reason: sentences.join(' '),
  };
}

/**
 * Drops of the observer's own copy of a packet, not of the packet: a capture socket (tcpdump) that could not
 * keep up frees its clone with PACKET_SOCK_ERROR while the packet itself goes on.
 */
const OBSERVER_DROPS = new Set(['PACKET_SOCK_ERROR']);

/** Any other drop the kernel reported for this flow, with its reason. */
function kernelDrop(ctx: Ctx): Found | undefined {
  const drop = ctx.events.find(
    (e): e is Drop => e.kind === 'drop' && e.reason !== 'NOT_SPECIFIED' && !OBSERVER_DROPS.has(e.reason) && (e.packet.src === ctx.client || e.packet.dst === ctx.client),
  );
  if (!drop) return undefined;
  return {
    culprit: { kind: drop.reason === 'NO_SOCKET' ? 'socket' : 'kernel', node: drop.where, where: drop.location, text: `${drop.reason} on ${drop.iface}` },
    packet: drop.packet,
    reason: `The kernel in ${drop.where} dropped ${showPacket(drop.packet)}: ${drop.reason} in ${drop.location} (${drop.iface}${drop.cause?.kind === 'neighbour' ? `: no ARP answer for ${drop.cause.neighbour}` : ''}).`,
  };
}
