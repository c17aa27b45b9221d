// Pure classification of what a probe saw into an outcome class. Unit-tested without a lab.
import type { Outcome } from '../model/outcome.ts';
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
}

/** A reply to the client from somewhere it never sent to: the signature of a reply that missed its reverse NAT. */
export function foreignReply(packets: readonly Packet[], client: string, target: Endpoint): { reply: Packet; clientReset: boolean } | undefined {
  const reply = packets.find(
    (p) => p.dst === client && (p.src !== target.ip || p.sport !== target.port) && (p.proto === 'udp' ? p.sport === target.port || p.sport === 53 : p.flags?.startsWith('S.')),
  );
  if (!reply) return undefined;
  const clientReset = packets.some((p) => p.src === client && p.dst === reply.src && p.dport === reply.sport && p.flags?.startsWith('R'));
  return { reply, clientReset };
}

export interface CurlResult {
  exitCode: number | undefined;
  stderr: string;
  httpCode: number;
  body: string;
  /** curl's time_connect in seconds; 0 when the handshake never completed. */
  connectSeconds?: number;
}

/** Where the client's first SYN went: the URL's address, unless something rewrote connect(). */
export function synDestination(packets: readonly Packet[], client: string): string | undefined {
  const syn = packets.find((p) => p.src === client && p.flags === 'S');
  return syn && `${syn.dst}:${syn.dport}`;
}

export function classifyCurl(curl: CurlResult, packets: readonly Packet[], client: string, target: Endpoint): Classified {
  const { exitCode, stderr } = curl;
  if (exitCode === 0) {
    if (curl.httpCode >= 200 && curl.httpCode < 400) return { outcome: 'ok', reason: `HTTP ${curl.httpCode}`, servedBy: curl.body.trim() || undefined, source: `${target.ip}:${target.port}` };
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
  const message = stderr.trim().split('\n').pop() ?? '';
  if (exitCode === 28 && curl.connectSeconds) {
    return { outcome: 'timeout', reason: `connected in ${(curl.connectSeconds * 1000).toFixed(1)} ms, then no HTTP response (curl exit 28)` };
  }
  if (exitCode === 28) return { outcome: 'timeout', reason: message || 'curl exit 28' };
  if (exitCode === 7 && /refused/i.test(stderr)) return { outcome: 'refused', reason: message };
  if (exitCode === 7 && /no route|unreachable/i.test(stderr)) return { outcome: 'unreachable', reason: message };
  if ((exitCode === 56 || exitCode === 52 || exitCode === 55) && /reset/i.test(stderr)) return { outcome: 'reset', reason: message };
  return { outcome: 'error', reason: message || `curl exit ${exitCode}` };
}

export interface DnsAgentResult {
  outcome: 'ok' | 'timeout' | 'unexpected-source';
  server: string;
  replies: { from: string; rcode: number; answers: string[] }[];
}

export function classifyDnsAgent(result: DnsAgentResult, expectedAnswer: string | undefined): Classified {
  const first = result.replies[0];
  if (result.outcome === 'unexpected-source' && first) {
    return { outcome: 'unexpected-source', reason: `reply from unexpected source: ${first.from}, expected ${result.server}`, source: first.from.replace('#', ':') };
  }
  if (result.outcome === 'timeout') return { outcome: 'timeout', reason: `no reply from ${result.server}` };
  const reply = result.replies.find((r) => r.from === result.server)!;
  if (expectedAnswer !== undefined && !reply.answers.includes(expectedAnswer)) {
    return { outcome: 'wrong-answer', reason: `answer ${reply.answers.join(',') || `rcode ${reply.rcode}`}, expected ${expectedAnswer}` };
  }
  return { outcome: 'ok', reason: `answer ${reply.answers.join(',') || `rcode ${reply.rcode}`} from ${reply.from}`, source: reply.from.replace('#', ':') };
}
