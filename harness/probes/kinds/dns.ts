// dns probe runner: one query by our resolver (it reads every reply's source) or BIND's nslookup (a
// connected socket); the reply on the wire names the source, the answer section is kept for `answer:`.
import type { Observation } from '../../model/outcome.ts';
import type { ProbeSpec } from '../../model/scenario-schema.ts';
import { classifyDnsAgent, dnsReplyOnWire, foreignReply, type Classified, type DnsAgentResult } from '../classify.ts';
import { earlyVerdict, lastLine, observation, startWatch, type ProbeRun } from '../probe-run.ts';

/** The addresses nslookup printed for the name (after its "Name:" line; the server's own address comes before). */
export function nslookupAnswers(stdout: string): string[] {
  const afterName = stdout.split(/^Name:/m).slice(1).join('\n');
  return [...afterName.matchAll(/^Address:\s*(\d+\.\d+\.\d+\.\d+)\s*$/gm)].map((m) => m[1]!);
}

export async function runDns(run: ProbeRun, dns: NonNullable<ProbeSpec['dns']>): Promise<Observation> {
  const { cluster, client, target, endpoint, signal, timeoutMs } = run;
  const watch = await startWatch(run, ['(udp', 'port', '53)', 'or', 'icmp']);
  const early = earlyVerdict(watch, run);
  try {
    if (dns.tool === 'agent') {
      const r = await target.exec([...cluster.agentCommand, 'dns-query', `--server=${endpoint.ip}`, '--port=53', `--qname=${dns.name}`, `--timeout=${timeoutMs}`, ...(dns.sourcePort ? [`--sport=${dns.sourcePort}`] : [])], { signal, timeoutMs: timeoutMs + 5000 });
      const packets = await watch.stop();
      const result = JSON.parse(r.stdout) as DnsAgentResult;
      return observation(run, classifyDnsAgent(result, packets, client), { qname: dns.name, replies: result.replies }, packets);
    }
    const r = await target.exec(['nslookup', `-timeout=${Math.max(1, Math.round(timeoutMs / 1000))}`, '-retry=1', dns.name, endpoint.ip], { reject: false, signal, stopWhen: early.signal });
    const packets = await watch.stop();
    const foreign = foreignReply(packets, client, endpoint);
    const reply = dnsReplyOnWire(packets, client, endpoint);
    const classified: Classified = foreign
      ? { outcome: 'unexpected-source', reason: `reply from unexpected source: ${foreign.reply.src}#${foreign.reply.sport}, expected ${endpoint.ip}#53 (on the wire; nslookup: ${lastLine(r.stdout)})`, source: `${foreign.reply.src}:${foreign.reply.sport}` }
      : r.exitCode === 0 && reply
        ? { outcome: 'ok', reason: `${lastLine(r.stdout)}; reply on the wire from ${reply.src}.${reply.sport}`, source: `${reply.src}:${reply.sport}`, answers: nslookupAnswers(r.stdout) }
        : r.exitCode === 0
          ? { outcome: 'error', reason: `nslookup answered but no reply was captured: ${lastLine(r.stdout)}` }
          : { outcome: /timed out|no servers/.test(r.stdout) ? 'timeout' : 'error', reason: lastLine(r.stdout) };
    if (foreign && r.stopped) classified.reason = `reply from unexpected source: ${foreign.reply.src}#${foreign.reply.sport}, expected ${endpoint.ip}#53 (on the wire; nslookup, which uses a connected socket, never sees it)`;
    return observation(run, classified, { qname: dns.name, nslookupExit: r.stopped ? 'stopped: the evidence was conclusive' : r.exitCode, nslookup: r.stdout.trim() }, packets);
  } finally {
    await watch.stop();
  }
}
