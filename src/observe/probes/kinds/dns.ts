// dns probe runner: one query by our resolver (it reads every reply's source) or BIND's nslookup (a
// connected socket); the reply on the wire names the source, the answer section is kept for `answer:`.
import type { Observation } from '../../../model/outcome.ts';
import type { ProbeSpec } from '../../../model/scenario-schema.ts';
import { agentDatagram, datagramStops } from '../agent-datagram.ts';
import {
  classifyDnsAgent,
  udpReplyOnWire,
  foreignReply,
  icmpAboutQuery,
  icmpInsteadOfReply,
  type Classified,
  type DnsReply,
} from '../classify.ts';
import { earlyVerdict, lastLine, observation, startWatch, type ProbeRun } from '../probe-run.ts';
import { DNS_WATCH } from '../watch-filters.ts';
import { PRINT_LAG_MS } from '../packet-watch.ts';

/** The addresses nslookup printed for the name (after its "Name:" line; the server's own address comes before). */
export function nslookupAnswers(stdout: string): string[] {
  const afterName = stdout
    .split(/^Name:/m)
    .slice(1)
    .join('\n');
  return [...afterName.matchAll(/^Address:\s*(\d+\.\d+\.\d+\.\d+)\s*$/gm)].map((m) => m[1]!);
}

export async function runDns(run: ProbeRun, dns: NonNullable<ProbeSpec['dns']>): Promise<Observation> {
  const { client, target, endpoint, signal, timeoutMs } = run;
  const watch = await startWatch(run, DNS_WATCH);
  const early = earlyVerdict(watch, run);
  const stops = datagramStops(watch, run);
  try {
    if (dns.tool === 'agent') {
      const exchange = await agentDatagram<DnsReply>(run, watch, stops, [
        'dns-query',
        `--server=${endpoint.ip}`,
        '--port=53',
        `--qname=${dns.name}`,
        `--timeout=${timeoutMs}`,
        ...(dns.sourcePort ? [`--sport=${dns.sourcePort}`] : []),
      ]);
      const { packets } = exchange;
      if (exchange.atDrop) return observation(run, exchange.atDrop, { qname: dns.name, replies: [] }, packets);
      return observation(
        run,
        classifyDnsAgent(exchange.result, packets, client),
        { qname: dns.name, replies: exchange.result.replies },
        packets,
      );
    }
    const r = await target.exec(
      ['nslookup', `-timeout=${Math.max(1, Math.round(timeoutMs / 1000))}`, '-retry=1', dns.name, endpoint.ip],
      { reject: false, signal, stopWhen: AbortSignal.any([early.signal, stops.stopWhen]) },
    );
    // nslookup got its answer: the reply it read was captured first, but tcpdump may not have printed it yet
    // (stopped then, it would never print it: it stops reading its ring at the signal)
    if (r.exitCode === 0)
      await watch.until((seen) => udpReplyOnWire(seen, client, endpoint) !== undefined, PRINT_LAG_MS);
    const packets = await watch.stop();
    const atDrop = early.signal.aborted ? undefined : stops.calledAtDrop(r, packets);
    if (atDrop)
      return observation(
        run,
        atDrop,
        { qname: dns.name, nslookupExit: 'stopped: the trace attributed a drop' },
        packets,
      );
    const foreign = foreignReply(packets, client, endpoint);
    const reply = udpReplyOnWire(packets, client, endpoint);
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
          ? `stopped: ${stops.icmp.aborted ? 'an ICMP error answered the query' : 'the evidence was conclusive'}`
          : r.exitCode,
        nslookup: r.stdout.trim(),
      },
      packets,
    );
  } finally {
    await watch.stop();
  }
}
