// Pure classification of what a probe saw into an outcome class. Unit-tested without a lab.
import type { Outcome } from '../../model/outcome.ts';
import type { Packet } from './packet-watch.ts';

export interface Endpoint {
  ip: string;
  port: number;
}

export interface Classified {
  outcome: Outcome;
  reason: string;
  source?: string;
  servedBy?: string;
  /** Address:port the server saw the request come from, as it reported it. */
  clientAddress?: string;
  /** DNS: the answer section's addresses. */
  answers?: string[];
}

/**
 * The packets of the probe's own connection, and ICMP errors (each judged by what it quotes): the connection
 * of the client's source port, the one it bound, else that of its first SYN to `target`. A node's capture also
 * holds the node's other connections (kubelet's to the API server, say), whose handshakes answer someone else.
 * Without either, every packet (a connect() rewritten to another address sends no SYN to `target`).
 */
export function ownFlow(
  packets: readonly Packet[],
  client: string,
  target: Endpoint,
  sourcePort?: number,
): readonly Packet[] {
  const port =
    sourcePort ??
    packets.find(
      (p) => p.proto === 'tcp' && p.src === client && p.flags === 'S' && p.dst === target.ip && p.dport === target.port,
    )?.sport;
  if (port === undefined) return packets;
  return packets.filter(
    (p) =>
      p.proto === 'icmp' ||
      (p.src === client && p.sport === port) ||
      (p.dst === client && p.dport === port) ||
      // translated on the way (a node masquerades its own connection): the port still tells it
      (p.src !== client && p.dst !== client && (p.sport === port || p.dport === port)),
  );
}

/** A reply to the client from somewhere it never sent to: the signature of a reply that missed its reverse NAT. */
export function foreignReply(
  packets: readonly Packet[],
  client: string,
  target: Endpoint,
): { reply: Packet; clientReset: boolean } | undefined {
  const reply = packets.find(
    (p) =>
      p.dst === client &&
      (p.src !== target.ip || p.sport !== target.port) &&
      (p.proto === 'udp' ? p.sport === target.port || p.sport === 53 : p.flags?.startsWith('S.')),
  );
  if (!reply) return undefined;
  const clientReset = packets.some(
    (p) => p.src === client && p.dst === reply.src && p.dport === reply.sport && p.flags?.startsWith('R'),
  );
  return { reply, clientReset };
}

export interface CurlResult {
  exitCode: number | undefined;
  stderr: string;
  httpCode: number;
  body: string;
  /** curl's time_connect in seconds; 0 when the handshake never completed. */
  connectSeconds?: number;
  /** The x-client-address header: where the server saw the request come from. */
  clientAddress?: string;
  /** The source port the client bound (curl --local-port), which names its connection in the capture. */
  sourcePort?: number;
}

/** Where the client's first SYN went: the URL's address, unless something rewrote connect(). */
export function synDestination(packets: readonly Packet[], client: string): string | undefined {
  const syn = packets.find((p) => p.src === client && p.flags === 'S');
  return syn && `${syn.dst}:${syn.dport}`;
}

/** The source of the server's SYN-ACK to the client, as captured: who really answered the connection. */
export function synAckSource(packets: readonly Packet[], client: string): string | undefined {
  const synAck = packets.find((p) => p.proto === 'tcp' && p.dst === client && p.flags?.startsWith('S.'));
  return synAck && `${synAck.src}:${synAck.sport}`;
}

/**
 * What answered the client's connection attempt, read from the wire: a RST to its SYN (connect() gets
 * ECONNREFUSED), an ICMP port-unreachable (ECONNREFUSED too: kube-proxy's REJECT for a Service without
 * endpoints), or another ICMP destination-unreachable (EHOSTUNREACH/ENETUNREACH). The first one counts, and
 * only one the client's socket acts on: a RST from where the SYN went (as the client sees it, after reverse
 * NAT), an ICMP error about that address. Anything else the kernel drops without telling the socket.
 */
export function connectAnswer(packets: readonly Packet[], client: string): Classified | undefined {
  const syn = packets.find((p) => p.proto === 'tcp' && p.src === client && p.flags === 'S');
  for (const p of packets) {
    if (p.dst !== client) continue;
    if (p.proto === 'tcp' && p.flags?.startsWith('S.') && (!syn || p.dport === syn.sport)) return undefined; // it connected
    if (
      p.proto === 'tcp' &&
      p.flags?.startsWith('R') &&
      syn &&
      p.dport === syn.sport &&
      p.src === syn.dst &&
      p.sport === syn.dport
    ) {
      return {
        outcome: 'refused',
        reason: `RST from ${p.src}:${p.sport} in answer to the SYN to ${syn.dst}:${syn.dport}`,
        source: `${p.src}:${p.sport}`,
      };
    }
    if (p.icmp && (!syn || aboutSyn(p, syn))) {
      const what = `ICMP ${p.icmp.name} (type 3 code ${p.icmp.code}) from ${p.src} about ${p.icmp.about}${p.icmp.port ? ` ${p.icmp.port.proto} port ${p.icmp.port.port}` : ''}`;
      return { outcome: p.icmp.code === 3 ? 'refused' : 'unreachable', reason: what, source: p.src };
    }
  }
  return undefined;
}

/** An ICMP error quoting the client's SYN: about the address it went to (and its port, when quoted). */
const aboutSyn = (p: Packet, syn: Packet) =>
  p.icmp!.about === syn.dst && (!p.icmp!.port || (p.icmp!.port.proto === 'tcp' && p.icmp!.port.port === syn.dport));

/**
 * RSTs and ICMP errors that reached the client's port but not its connection (a RST that missed its reverse
 * NAT comes from the backend's address, not the Service's): named in the verdict, never its outcome.
 */
export function ignoredAnswers(packets: readonly Packet[], client: string): string[] {
  const syn = packets.find((p) => p.proto === 'tcp' && p.src === client && p.flags === 'S');
  if (!syn) return [];
  return packets
    .filter(
      (p) =>
        p.dst === client &&
        ((p.proto === 'tcp' &&
          p.flags?.startsWith('R') &&
          p.dport === syn.sport &&
          (p.src !== syn.dst || p.sport !== syn.dport)) ||
          (p.icmp && !aboutSyn(p, syn))),
    )
    .slice(0, 1)
    .map((p) =>
      p.icmp
        ? `ICMP ${p.icmp.name} from ${p.src} about ${p.icmp.about} ignored by the client: its SYN went to ${syn.dst}:${syn.dport}`
        : `RST from ${p.src}:${p.sport} ignored by the client: not from ${syn.dst}:${syn.dport}, where its SYN went`,
    );
}

/** The client address the server reported seeing, in words (nothing when it reported none). */
const seenAs = (clientAddress: string | undefined) =>
  clientAddress ? `; the server saw the client as ${clientAddress}` : '';

/** connect() errno names and the outcome each one means for the application. */
const ERRNO_OUTCOME: Record<string, Outcome> = {
  ECONNREFUSED: 'refused',
  EHOSTUNREACH: 'unreachable',
  ENETUNREACH: 'unreachable',
  ETIMEDOUT: 'timeout',
  ECONNRESET: 'reset',
};

/**
 * Outcome of an HTTP probe. The wire decides (a reply from an unexpected source, a RST or ICMP answering
 * the SYN, the SYN-ACK's source); a connect() that failed with no packet sent is named by its errno
 * (`localErrno`, read by a second connect() from the pod agent); curl's wording is the last resort.
 */
export function classifyCurl(
  curl: CurlResult,
  packets: readonly Packet[],
  client: string,
  target: Endpoint,
  localErrno?: string,
): Classified {
  const { exitCode, stderr } = curl;
  packets = ownFlow(packets, client, target, curl.sourcePort);
  if (exitCode === 0) {
    if (curl.httpCode >= 200 && curl.httpCode < 400) {
      const source = synAckSource(packets, client);
      return {
        outcome: 'ok',
        reason: `HTTP ${curl.httpCode}${source ? `; SYN-ACK from ${source}` : '; the handshake was not captured'}${seenAs(curl.clientAddress)}`,
        servedBy: curl.body.trim() || undefined,
        clientAddress: curl.clientAddress || undefined,
        source,
      };
    }
    return { outcome: 'wrong-answer', reason: `HTTP ${curl.httpCode}` };
  }
  const foreign = foreignReply(packets, client, target);
  if (foreign) {
    const from = `${foreign.reply.src}:${foreign.reply.sport}`;
    return {
      outcome: 'unexpected-source',
      reason: `SYN-ACK from ${from}, expected from ${target.ip}:${target.port}${foreign.clientReset ? `; client answered RST to ${from}` : ''}${exitCode === undefined ? '' : `; curl exit ${exitCode}`}`,
      source: from,
    };
  }
  const answer = connectAnswer(packets, client);
  if (answer) return { ...answer, reason: `${answer.reason}; curl exit ${exitCode}` };
  const message = stderr.trim().split('\n').pop() ?? '';
  const ignored = ignoredAnswers(packets, client)
    .map((x) => `; ${x}`)
    .join('');
  if (exitCode === 28 && curl.connectSeconds) {
    return {
      outcome: 'timeout',
      reason: `connected in ${(curl.connectSeconds * 1000).toFixed(1)} ms, then no HTTP response (curl exit 28)${ignored}`,
    };
  }
  const sentSyn = packets.some((p) => p.proto === 'tcp' && p.src === client && p.flags === 'S');
  if (exitCode === 7 && !sentSyn && localErrno && ERRNO_OUTCOME[localErrno]) {
    return {
      outcome: ERRNO_OUTCOME[localErrno]!,
      reason: `connect() failed in the client with ${localErrno}; no packet left it (curl exit 7)`,
    };
  }
  if (exitCode === 28)
    return {
      outcome: 'timeout',
      reason: `${message || 'curl exit 28'}${sentSyn ? `; the SYN got no answer${ignored ? ' it acted on' : ''}` : ''}${ignored}`,
    };
  // last resort: curl's own words (nothing on the wire explained it)
  if (exitCode === 7 && /refused/i.test(stderr))
    return { outcome: 'refused', reason: `${message} (curl's message; nothing captured)` };
  if (exitCode === 7 && /no route|unreachable/i.test(stderr))
    return { outcome: 'unreachable', reason: `${message} (curl's message; nothing captured)` };
  if ((exitCode === 56 || exitCode === 52 || exitCode === 55) && /reset/i.test(stderr))
    return { outcome: 'reset', reason: message };
  return { outcome: 'error', reason: message || `curl exit ${exitCode}` };
}

/** A reply an agent UDP client (dns-query, udp-query) read: its source as the client's socket saw it. */
export interface DatagramReply {
  from: string;
}

/** What an agent UDP client printed: it reads the source of every reply (an unconnected socket). */
export interface DatagramResult<R extends DatagramReply = DatagramReply> {
  /** `unreachable`: an ICMP destination-unreachable about the datagram reached the client first (the probe stopped the client). */
  outcome: 'ok' | 'timeout' | 'unexpected-source' | 'unreachable';
  server: string;
  replies: R[];
  /** dns-query: the client's port, as the kernel chose it (given with --sport). */
  sport?: number;
}

/** dns-query: a reply's rcode and the addresses of its answer section. */
export interface DnsReply extends DatagramReply {
  rcode: number;
  answers: string[];
}
export type DnsAgentResult = DatagramResult<DnsReply>;

/** udp-query: a reply's size, and the name and client address the agent's UDP server answered with, when it holds them. */
export interface UdpEchoReply extends DatagramReply {
  bytes: number;
  servedBy?: string;
  clientAddress?: string;
}
export type UdpAgentResult = DatagramResult<UdpEchoReply>;

/** The first UDP reply to the client on the wire (from the server's port, or from 53 for DNS). */
export function udpReplyOnWire(packets: readonly Packet[], client: string, server: Endpoint): Packet | undefined {
  return packets.find((p) => p.proto === 'udp' && p.dst === client && (p.sport === server.port || p.sport === 53));
}

/**
 * An ICMP destination-unreachable to the client about the server's address (and, for port-unreachable, its
 * UDP port), or about where the client's datagram actually went (socket LB rewrites it in sendmsg()):
 * nothing will answer it any more; with a connected socket the kernel reports it as
 * ECONNREFUSED/EHOSTUNREACH at once.
 */
export function icmpAboutQuery(packets: readonly Packet[], client: string, server: Endpoint): Packet | undefined {
  const sentTo = [
    server,
    ...packets
      .filter((p) => p.proto === 'udp' && p.src === client && p.dport !== undefined)
      .map((p) => ({ ip: p.dst, port: p.dport! })),
  ];
  const about = (p: Packet, to: Endpoint) =>
    p.icmp!.about === to.ip && (!p.icmp!.port || (p.icmp!.port.proto === 'udp' && p.icmp!.port.port === to.port));
  return packets.find((p) => p.icmp && p.dst === client && sentTo.some((to) => about(p, to)));
}

/** A datagram answered by an ICMP destination-unreachable: port-unreachable is `refused`, any other code `unreachable`. */
export function icmpInsteadOfReply(p: Packet, server: string): Classified {
  const code = p.icmp?.code;
  // about where the datagram went, when that was not the server (socket LB rewrote it)
  const about = p.icmp && p.icmp.about !== server.split('#')[0] ? ` about ${p.icmp.about}` : '';
  return {
    outcome: code === 3 ? 'refused' : 'unreachable',
    reason: `ICMP ${p.icmp?.name} (type 3 code ${code}) from ${p.src}${about}; no reply from ${server}`,
    source: p.src,
  };
}

/**
 * An agent UDP client's exchange: its own reading of every reply's source decides, the capture backs it when it
 * has the packet, and an ICMP error about the datagram answers it. `answered` says what a reply from the server
 * holds (the DNS answer section; the name and client address a UDP server answered with).
 */
export function classifyDatagram<R extends DatagramReply>(
  result: DatagramResult<R>,
  packets: readonly Packet[],
  client: string,
  answered: (reply: R) => Omit<Classified, 'outcome' | 'source'>,
): Classified {
  const first = result.replies[0];
  const server = { ip: result.server.split('#')[0]!, port: Number(result.server.split('#')[1] ?? 53) };
  const onWire = (p: Packet | undefined) => (p ? ` (on the wire: ${p.src}.${p.sport} > ${p.dst}.${p.dport})` : '');
  if (result.outcome === 'unexpected-source' && first) {
    // the captured datagram from where the client's socket read it (any port: a target port DNAT chose)
    const foreign = packets.find((p) => p.proto === 'udp' && p.dst === client && `${p.src}#${p.sport}` === first.from);
    return {
      outcome: 'unexpected-source',
      reason: `reply from unexpected source: ${first.from}, expected ${result.server}${onWire(foreign)}`,
      source: first.from.replace('#', ':'),
    };
  }
  if (result.outcome === 'timeout' || result.outcome === 'unreachable') {
    // the ICMP error about this datagram (or where socket LB sent it), not any error the client got
    const icmp = icmpAboutQuery(packets, client, server);
    if (icmp) return icmpInsteadOfReply(icmp, result.server);
    if (result.outcome === 'unreachable')
      return {
        outcome: 'error',
        reason: `the query was stopped at an ICMP error the capture does not hold; no reply from ${result.server}`,
      };
    return { outcome: 'timeout', reason: `no reply from ${result.server}` };
  }
  const reply = result.replies.find((r) => r.from === result.server)!;
  const wire = udpReplyOnWire(packets, client, server);
  const source = wire ? `${wire.src}:${wire.sport}` : reply.from.replace('#', ':');
  const what = answered(reply);
  return { outcome: 'ok', ...what, reason: `${what.reason} from ${reply.from}${onWire(wire)}`, source };
}

/** dns-query: the answer section is kept for `answer:`. */
export function classifyDnsAgent(result: DnsAgentResult, packets: readonly Packet[] = [], client = ''): Classified {
  return classifyDatagram(result, packets, client, (r) => ({
    reason: `answer ${r.answers.join(',') || `rcode ${r.rcode}`}`,
    answers: r.answers,
  }));
}

/** udp-query: the server that answered and the client address it saw, when its reply names them. */
export function classifyUdpAgent(result: UdpAgentResult, packets: readonly Packet[] = [], client = ''): Classified {
  return classifyDatagram(result, packets, client, (r) => ({
    reason: r.servedBy
      ? `${r.servedBy} answered${r.clientAddress ? ` (it saw the client as ${r.clientAddress})` : ''}`
      : `${r.bytes} bytes naming no server`,
    servedBy: r.servedBy,
    clientAddress: r.clientAddress,
  }));
}

/**
 * A TCP segment reaching the client from an address:port it never connected to, at any point of the
 * connection (not only the handshake): a packet that missed its reverse NAT, e.g. one conntrack marked INVALID.
 */
export function foreignSegment(
  packets: readonly Packet[],
  client: string,
  target: Endpoint,
): { packet: Packet; clientReset: boolean } | undefined {
  const packet = packets.find(
    (p) =>
      p.proto === 'tcp' &&
      p.dst === client &&
      (p.src !== target.ip || p.sport !== target.port) &&
      !p.flags?.startsWith('R'),
  );
  if (!packet) return undefined;
  const clientReset = packets.some(
    (p) =>
      p.src === client &&
      p.dst === packet.src &&
      p.dport === packet.sport &&
      p.sport === packet.dport &&
      p.flags?.startsWith('R'),
  );
  return { packet, clientReset };
}

export interface DownloadResult extends CurlResult {
  /** Bytes the server was asked to stream. */
  bytes: number;
  /** curl's size_download. */
  sizeDownload: number;
  /** The x-served-by header. */
  servedBy?: string;
}

/** A download is ok only if every byte arrived; a reset names the packet that provoked it when the client saw one. */
export function classifyDownload(
  d: DownloadResult,
  packets: readonly Packet[],
  client: string,
  target: Endpoint,
): Classified {
  const got = `${d.sizeDownload} of ${d.bytes} bytes`;
  if (d.exitCode === 0 && d.httpCode === 200 && d.sizeDownload === d.bytes) {
    const source = synAckSource(packets, client);
    return {
      outcome: 'ok',
      reason: `HTTP 200, ${got}${source ? `; SYN-ACK from ${source}` : ''}${seenAs(d.clientAddress)}`,
      servedBy: d.servedBy || undefined,
      clientAddress: d.clientAddress || undefined,
      source,
    };
  }
  if (d.exitCode === 0) return { outcome: 'wrong-answer', reason: `HTTP ${d.httpCode}, ${got}` };
  const message = d.stderr.trim().split('\n').pop() ?? '';
  if ((d.exitCode === 56 || d.exitCode === 52 || d.exitCode === 55 || d.exitCode === 18) && /reset/i.test(d.stderr)) {
    const foreign = foreignSegment(packets, client, target);
    if (!foreign) return { outcome: 'reset', reason: `${message}, after ${got}` };
    const from = `${foreign.packet.src}:${foreign.packet.sport}`;
    return {
      outcome: 'reset',
      reason:
        `a packet from ${from} (not ${target.ip}:${target.port}: it missed its reverse NAT) reached the client` +
        `${foreign.clientReset ? `, which answered RST to ${from}` : ''}; curl exit ${d.exitCode} "${message}" after ${got}`,
      source: from,
    };
  }
  const c = classifyCurl(d, packets, client, target);
  return { ...c, reason: `${c.reason}, after ${got}` };
}
