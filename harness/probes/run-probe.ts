// Runs one probe from its pod and returns a structured Observation that prints its own evidence:
// `client -> 10.96.0.20:80 = unexpected-source (SYN-ACK from 10.244.1.3:8080 ...)`.
import type { StartedCluster } from '../../clusters/provider.ts';
import type { Observation } from '../model/outcome.ts';
import type { ProbeSpec } from '../model/scenario-schema.ts';
import { classifyCurl, classifyDnsAgent, foreignReply, synDestination, type Classified, type DnsAgentResult, type Endpoint } from './classify.ts';
import { PacketWatch, type Packet } from './packet-watch.ts';

export function durationMs(d: number | string): number {
  if (typeof d === 'number') return d;
  const n = Number.parseFloat(d);
  return d.endsWith('ms') ? n : n * 1000;
}

export async function runProbe(spec: ProbeSpec, cluster: StartedCluster, signal: AbortSignal): Promise<Observation> {
  const started = performance.now();
  const client = cluster.address(`pod/${spec.from}`);
  const target = cluster.pod(spec.from);
  const timeoutMs = durationMs(spec.timeout);
  const endpoint: Endpoint = spec.http
    ? { ip: cluster.address(spec.http.to), port: spec.http.port }
    : { ip: cluster.address(spec.dns!.server), port: 53 };
  const watch = await PacketWatch.start(target, spec.http ? ['tcp'] : ['udp', 'port', '53']);
  // conclusive evidence ends the probe before its deadline: the client already RST a SYN-ACK from an
  // address it never contacted (TCP), or a DNS reply came from the wrong source (UDP)
  const early = new AbortController();
  watch.onPacket((seen) => {
    const foreign = foreignReply(seen, client, endpoint);
    if (foreign && (foreign.reply.proto === 'udp' || foreign.clientReset)) early.abort();
  });
  let classified: Classified;
  let detail: Record<string, unknown>;
  let packets: Packet[] = [];
  let tcp: { connected: boolean; sentTo?: string } | undefined;
  try {
    if (spec.http) {
      const url = `http://${endpoint.ip}:${endpoint.port}${spec.http.path}`;
      // --max-time is the verdict deadline: a hang is called after exactly that, never later
      const r = await target.exec(['curl', '-sS', '--max-time', String(timeoutMs / 1000), '-w', '\n%{http_code} %{time_connect}', url], { reject: false, signal, stopWhen: early.signal });
      packets = await watch.stop();
      const lines = r.stdout.split('\n');
      const [code = '0', connect = '0'] = (lines.at(-1) ?? '').split(' ');
      const httpCode = Number(code);
      const connectSeconds = Number(connect);
      classified = classifyCurl({ exitCode: r.exitCode, stderr: r.stderr, httpCode, body: lines.slice(0, -1).join('\n'), connectSeconds }, packets, client, endpoint);
      tcp = { connected: connectSeconds > 0, sentTo: synDestination(packets, client) };
      detail = { url, curlExit: r.stopped ? 'stopped: the evidence was conclusive' : r.exitCode, httpCode, connectMs: Math.round(connectSeconds * 1e4) / 10, curlError: r.stderr.trim() || undefined };
    } else {
      const dns = spec.dns!;
      if (dns.tool === 'agent') {
        const r = await target.exec([...cluster.agentCommand, 'dns-query', `--server=${endpoint.ip}`, '--port=53', `--qname=${dns.name}`, `--timeout=${timeoutMs}`], { signal, timeoutMs: timeoutMs + 5000 });
        packets = await watch.stop();
        const result = JSON.parse(r.stdout) as DnsAgentResult;
        classified = classifyDnsAgent(result, undefined);
        detail = { qname: dns.name, replies: result.replies };
      } else {
        const r = await target.exec(['nslookup', `-timeout=${Math.max(1, Math.round(timeoutMs / 1000))}`, '-retry=1', dns.name, endpoint.ip], { reject: false, signal, stopWhen: early.signal });
        packets = await watch.stop();
        const foreign = foreignReply(packets, client, endpoint);
        classified = foreign
          ? { outcome: 'unexpected-source', reason: `reply from unexpected source: ${foreign.reply.src}#${foreign.reply.sport}, expected ${endpoint.ip}#53 (on the wire; nslookup: ${lastLine(r.stdout)})`, source: `${foreign.reply.src}:${foreign.reply.sport}` }
          : r.exitCode === 0
            ? { outcome: 'ok', reason: lastLine(r.stdout), source: `${endpoint.ip}:53` }
            : { outcome: /timed out|no servers/.test(r.stdout) ? 'timeout' : 'error', reason: lastLine(r.stdout) };
        if (foreign && r.stopped) classified.reason = `reply from unexpected source: ${foreign.reply.src}#${foreign.reply.sport}, expected ${endpoint.ip}#53 (on the wire; nslookup, which uses a connected socket, never sees it)`;
        detail = { qname: dns.name, nslookupExit: r.stopped ? 'stopped: the evidence was conclusive' : r.exitCode, nslookup: r.stdout.trim() };
      }
    }
  } finally {
    await watch.stop();
  }
  const rewritten = tcp?.sentTo && tcp.sentTo !== `${endpoint.ip}:${endpoint.port}` ? `; SYN sent to ${tcp.sentTo}` : '';
  return {
    outcome: classified.outcome,
    summary: `${spec.from} -> ${endpoint.ip}:${endpoint.port} = ${classified.outcome} (${classified.reason}${rewritten})`,
    ...tcp,
    servedBy: classified.servedBy,
    source: classified.source,
    durationMs: Math.round(performance.now() - started),
    detail: { ...detail, packets: packets.slice(0, 30).map((p) => p.line) },
  };
}

function lastLine(text: string): string {
  return text.trim().split('\n').filter(Boolean).pop() ?? '';
}
