// dns probe runner: one query by our resolver (it reads every reply's source) or BIND's nslookup (a
// connected socket); the reply on the wire names the source, the answer section is kept for `answer:`.
import type { Observation } from '../../../model/outcome.ts';
import type { ProbeSpec } from '../../../model/scenario-schema.ts';
import {
  classifyDnsAgent,
  dnsReplyOnWire,
  foreignReply,
  icmpAboutQuery,
  icmpInsteadOfReply,
  type Classified,
  type DnsAgentResult,
} from '../classify.ts';
import type { Packet, PacketView } from '../packet-watch.ts';
import { dropVerdict } from '../../trace/drop-verdict.ts';
import { earlyVerdict, lastLine, observation, startWatch, type ProbeRun } from '../probe-run.ts';
import { DNS_WATCH } from '../watch-filters.ts';

/** The addresses nslookup printed for the name (after its "Name:" line; the server's own address comes before). */
export function nslookupAnswers(stdout: string): string[] {
  const afterName = stdout
    .split(/^Name:/m)
    .slice(1)
    .join('\n');
  return [...afterName.matchAll(/^Address:\s*(\d+\.\d+\.\d+\.\d+)\s*$/gm)].map((m) => m[1]!);
}

/**
 * Aborted when an ICMP destination-unreachable about the query reaches the client: UDP has no other
 * answer to wait for (an unconnected socket, like our resolver's, is never told of it by the kernel).
 */
function icmpAnswered(watch: PacketView, run: ProbeRun): AbortController {
  const answered = new AbortController();
  watch.onPacket((seen) => {
    if (!answered.signal.aborted && icmpAboutQuery(seen, run.client, run.endpoint)) answered.abort();
  });
  return answered;
}

export async function runDns(run: ProbeRun, dns: NonNullable<ProbeSpec['dns']>): Promise<Observation> {
  const { cluster, client, target, endpoint, signal, dropped, timeoutMs } = run;
  const watch = await startWatch(run, DNS_WATCH);
  const early = earlyVerdict(watch, run);
  const icmp = icmpAnswered(watch, run);
  const stopWhen = dropped ? AbortSignal.any([icmp.signal, dropped.signal]) : icmp.signal;
  // stopped at a drop the trace attributed, and no ICMP about the query reached the client (that answer, had it come, decides)
  const calledAtDrop = (r: { stopped?: boolean }, packets: readonly Packet[]) =>
    r.stopped && dropped?.drop && !icmp.signal.aborted && !icmpAboutQuery(packets, client, endpoint)
      ? dropVerdict(packets, client, endpoint, String(dropped.drop)).classified
      : undefined;
  try {
    if (dns.tool === 'agent') {
      // the resolver ends by itself at its first reply (from the server or not); an ICMP about the query or
      // a drop the trace attributed (the query dropped on its way, e.g. to a deleted pod) stops it earlier
      const r = await target.exec(
        [
          ...cluster.agentCommand,
          'dns-query',
          `--server=${endpoint.ip}`,
          '--port=53',
          `--qname=${dns.name}`,
          `--timeout=${timeoutMs}`,
          ...(dns.sourcePort ? [`--sport=${dns.sourcePort}`] : []),
        ],
        { signal, timeoutMs: timeoutMs + 5000, stopWhen },
      );
      const packets = await watch.stop();
      const atDrop = r.stdout.trim() ? undefined : calledAtDrop(r, packets);
      if (atDrop) return observation(run, atDrop, { qname: dns.name, replies: [] }, packets);
      // stopped before it printed: the ICMP answered the query (a reply it printed first still decides)
      const result: DnsAgentResult =
        r.stopped && !r.stdout.trim()
          ? { outcome: 'unreachable', server: `${endpoint.ip}#53`, replies: [] }
          : (JSON.parse(r.stdout) as DnsAgentResult);
      return observation(
        run,
        classifyDnsAgent(result, packets, client),
        { qname: dns.name, replies: result.replies },
        packets,
      );
    }
    const r = await target.exec(
      ['nslookup', `-timeout=${Math.max(1, Math.round(timeoutMs / 1000))}`, '-retry=1', dns.name, endpoint.ip],
      { reject: false, signal, stopWhen: AbortSignal.any([early.signal, stopWhen]) },
    );
    // nslookup got its answer: the reply it read was captured first, but tcpdump may not have printed it yet
    // (stopped then, it would never print it: it stops reading its ring at the signal)
    if (r.exitCode === 0) await watch.until((seen) => dnsReplyOnWire(seen, client, endpoint) !== undefined, 100);
    const packets = await watch.stop();
    const atDrop = early.signal.aborted ? undefined : calledAtDrop(r, packets);
    if (atDrop)
      return observation(
        run,
        atDrop,
        { qname: dns.name, nslookupExit: 'stopped: the trace attributed a drop' },
        packets,
      );
    const foreign = foreignReply(packets, client, endpoint);
    const reply = dnsReplyOnWire(packets, client, endpoint);
    const unreachable = icmpAboutQuery(packets, client, endpoint);
    const classified: Classified = foreign
      ? {
          outcome: 'unexpected-source',
          reason: `reply from unexpected source: ${foreign.reply.src}#${foreign.reply.sport}, expected ${endpoint.ip}#53 (on the wire; nslookup: ${lastLine(r.stdout)})`,
          source: `${foreign.reply.src}:${foreign.reply.sport}`,
        }
      : r.exitCode === 0 && reply
        ? {
            outcome: 'ok',
            reason: `${lastLine(r.stdout)}; reply on the wire from ${reply.src}.${reply.sport}`,
            source: `${reply.src}:${reply.sport}`,
            answers: nslookupAnswers(r.stdout),
          }
        : r.exitCode === 0
          ? { outcome: 'error', reason: `nslookup answered but no reply was captured: ${lastLine(r.stdout)}` }
          : unreachable
            ? icmpInsteadOfReply(unreachable, `${endpoint.ip}#53`)
            : { outcome: /timed out|no servers/.test(r.stdout) ? 'timeout' : 'error', reason: lastLine(r.stdout) };
    if (foreign && r.stopped)
      classified.reason = `reply from unexpected source: ${foreign.reply.src}#${foreign.reply.sport}, expected ${endpoint.ip}#53 (on the wire; nslookup, which uses a connected socket, never sees it)`;
    return observation(
      run,
      classified,
      {
        qname: dns.name,
        nslookupExit: r.stopped
          ? `stopped: ${icmp.signal.aborted ? 'an ICMP error answered the query' : 'the evidence was conclusive'}`
          : r.exitCode,
        nslookup: r.stdout.trim(),
      },
      packets,
    );
  } finally {
    await watch.stop();
  }
}
