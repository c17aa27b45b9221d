// Runs one probe from its pod and returns a structured Observation that prints its own evidence:
// `client -> 10.96.0.20:80 = unexpected-source (SYN-ACK from 10.244.1.3:8080 ...)`.
import type { StartedCluster } from '../../clusters/provider.ts';
import type { Observation } from '../model/outcome.ts';
import type { ProbeSpec } from '../model/scenario-schema.ts';
import { durationMs } from '../model/duration.ts';
import { classifyCurl, classifyDnsAgent, classifyDownload, connectAnswer, dnsReplyOnWire, foreignReply, synDestination, type Classified, type DnsAgentResult, type Endpoint } from './classify.ts';
import { foldRuns, pooled } from './repeat-stats.ts';
import { PacketWatch, type Packet } from './packet-watch.ts';
import { dropVerdict } from '../trace/drop-verdict.ts'; // probe-trace (issue 13): early verdict at an attributed drop

/** Runs the probe once, or `repeat` times (`parallel` at a time) folded into one Observation with the distribution of outcomes. */
export async function runProbe(spec: ProbeSpec, cluster: StartedCluster, signal: AbortSignal, dropped?: AbortSignal): Promise<Observation> {
  if (spec.repeat === undefined) return runOnce(spec, cluster, signal, dropped);
  const started = performance.now();
  const runs = await pooled(spec.repeat, spec.parallel, () => runOnce(spec, cluster, signal));
  const to = spec.http ? `${cluster.address(spec.http.to)}:${spec.http.port}` : spec.download ? `${cluster.address(spec.download.to)}:${spec.download.port}` : `${cluster.address(spec.dns!.server)}:53`;
  return foldRuns(`${spec.from} -> ${to}`, runs, performance.now() - started);
}

/** Where a probe runs: a pod (a plain name), `pod/`, `node/` (its host network) or `host/` (outside the cluster). */
export const clientRef = (from: string) => (from.includes('/') ? from : `pod/${from}`);
/** A node reaches pods over cni0/flannel.1 and the fabric over eth0: watch every interface there. */
const watchedInterface = (from: string) => (from.startsWith('node/') ? 'any' : 'eth0');

/** The errno of one connect() from the client, for a curl that failed with no packet on the wire. */
async function localErrno(cluster: StartedCluster, from: string, endpoint: Endpoint, signal: AbortSignal): Promise<string | undefined> {
  const r = await cluster.target(clientRef(from)).exec([...cluster.agentCommand, 'connect', `--server=${endpoint.ip}`, `--port=${endpoint.port}`, '--timeout=500'], { reject: false, signal, timeoutMs: 5000 });
  try {
    return (JSON.parse(r.stdout) as { errno: string | null }).errno ?? undefined;
  } catch {
    return undefined;
  }
}

/** `dropped` (probe trace): aborted, with the drop in words, when a packet the client sent was dropped deterministically. */
async function runOnce(spec: ProbeSpec, cluster: StartedCluster, signal: AbortSignal, dropped?: AbortSignal): Promise<Observation> {
  if (spec.download) return runDownload(spec, spec.download, cluster, signal);
  const started = performance.now();
  const client = cluster.address(clientRef(spec.from));
  const target = cluster.target(clientRef(spec.from));
  const timeoutMs = durationMs(spec.timeout);
  const endpoint: Endpoint = spec.http
    ? { ip: cluster.address(spec.http.to), port: spec.http.port }
    : { ip: cluster.address(spec.dns!.server), port: 53 };
  // concurrent runs of a repeated probe share the pod's interface: each connects from its own source
  // port and watches only that port, so no run calls its verdict on another run's packets
  const sourcePort = spec.http && spec.parallel > 1 ? nextSourcePort(cluster) : undefined;
  // ICMP too: an unreachable or a port-unreachable answering the client is what the application experienced
  const tcpFilter = sourcePort ? ['(tcp', 'port', `${sourcePort})`] : ['tcp'];
  const watch = await PacketWatch.start(target, spec.http ? [...tcpFilter, 'or', 'icmp'] : ['(udp', 'port', '53)', 'or', 'icmp'], watchedInterface(spec.from));
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
      const local = sourcePort ? ['--local-port', String(sourcePort)] : [];
      const r = await target.exec(['curl', '-sS', '--max-time', String(timeoutMs / 1000), ...local, '-w', '\n%{http_code} %{time_connect}', url], { reject: false, signal, stopWhen: dropped ? AbortSignal.any([early.signal, dropped]) : early.signal });
      // refused or unreachable at once: the answering packet may still be on its way through tcpdump
      if (r.exitCode === 7) await watch.until((seen) => seen.some((p) => p.dst === client), 100);
      // probe-trace (issue 13): stopped at a drop, which the node saw before tcpdump here printed the client's side of it
      // (or the answer a REJECT sent back, which must decide instead of the drop)
      if (r.stopped && dropped?.aborted) await watch.until((seen) => seen.some((p) => (p.src === client && p.flags !== 'S') || connectAnswer(seen, client) !== undefined), 100);
      packets = await watch.stop();
      const lines = r.stdout.split('\n');
      const [code = '0', connect = '0'] = (lines.at(-1) ?? '').split(' ');
      const httpCode = Number(code);
      const connectSeconds = Number(connect);
      // nothing left the pod: only the errno of connect() says why (curl 7.88 does not print it)
      const silent = r.exitCode === 7 && !packets.some((p) => p.src === client);
      const errno = silent ? await localErrno(cluster, spec.from, endpoint, signal) : undefined;
      classified = classifyCurl({ exitCode: r.exitCode, stderr: r.stderr, httpCode, body: lines.slice(0, -1).join('\n'), connectSeconds }, packets, client, endpoint, errno);
      tcp = { connected: connectSeconds > 0, sentTo: synDestination(packets, client) };
      // a RST or ICMP answered the SYN: what the application got, whatever the trace saw dropped
      if (r.stopped && dropped?.aborted && !early.signal.aborted && !connectAnswer(packets, client)) {
        const d = dropVerdict(packets, client, endpoint, String(dropped.reason));
        classified = d.classified;
        tcp.connected = d.connected;
      }
      detail = { url, curlExit: r.stopped ? (early.signal.aborted ? 'stopped: the evidence was conclusive' : 'stopped: the trace attributed a drop') : r.exitCode, httpCode, connectMs: Math.round(connectSeconds * 1e4) / 10, curlError: r.stderr.trim() || undefined, ...(errno ? { connectErrno: errno } : {}) };
    } else {
      const dns = spec.dns!;
      if (dns.tool === 'agent') {
        const r = await target.exec([...cluster.agentCommand, 'dns-query', `--server=${endpoint.ip}`, '--port=53', `--qname=${dns.name}`, `--timeout=${timeoutMs}`, ...(dns.sourcePort ? [`--sport=${dns.sourcePort}`] : [])], { signal, timeoutMs: timeoutMs + 5000 });
        packets = await watch.stop();
        const result = JSON.parse(r.stdout) as DnsAgentResult;
        classified = classifyDnsAgent(result, packets, client);
        detail = { qname: dns.name, replies: result.replies };
      } else {
        const r = await target.exec(['nslookup', `-timeout=${Math.max(1, Math.round(timeoutMs / 1000))}`, '-retry=1', dns.name, endpoint.ip], { reject: false, signal, stopWhen: early.signal });
        packets = await watch.stop();
        const foreign = foreignReply(packets, client, endpoint);
        const reply = dnsReplyOnWire(packets, client, endpoint);
        classified = foreign
          ? { outcome: 'unexpected-source', reason: `reply from unexpected source: ${foreign.reply.src}#${foreign.reply.sport}, expected ${endpoint.ip}#53 (on the wire; nslookup: ${lastLine(r.stdout)})`, source: `${foreign.reply.src}:${foreign.reply.sport}` }
          : r.exitCode === 0 && reply
            ? { outcome: 'ok', reason: `${lastLine(r.stdout)}; reply on the wire from ${reply.src}.${reply.sport}`, source: `${reply.src}:${reply.sport}`, answers: nslookupAnswers(r.stdout) }
            : r.exitCode === 0
              ? { outcome: 'error', reason: `nslookup answered but no reply was captured: ${lastLine(r.stdout)}` }
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
    answers: classified.answers,
    durationMs: Math.round(performance.now() - started),
    detail: { ...detail, packets: packets.slice(0, 30).map((p) => p.line) },
  };
}

/** The addresses nslookup printed for the name (after its "Name:" line; the server's own address comes before). */
export function nslookupAnswers(stdout: string): string[] {
  const afterName = stdout.split(/^Name:/m).slice(1).join('\n');
  return [...afterName.matchAll(/^Address:\s*(\d+\.\d+\.\d+\.\d+)\s*$/gm)].map((m) => m[1]!);
}

/**
 * A source port no earlier run in this lab used (below the ephemeral range, so no other connection
 * takes it): a reused 4-tuple would meet the previous run's conntrack entry, and its NAT decision.
 */
const sourcePorts = new WeakMap<StartedCluster, number>();
function nextSourcePort(cluster: StartedCluster): number {
  const port = sourcePorts.get(cluster) ?? 20_000;
  sourcePorts.set(cluster, port >= 29_999 ? 20_000 : port + 1);
  return port;
}

/** curl of GET /bytes/N from the pod agent; the packet watch keeps only what is not the normal stream. */
async function runDownload(spec: ProbeSpec, download: NonNullable<ProbeSpec['download']>, cluster: StartedCluster, signal: AbortSignal): Promise<Observation> {
  const started = performance.now();
  const client = cluster.address(clientRef(spec.from));
  const target = cluster.target(clientRef(spec.from));
  const timeoutMs = durationMs(spec.timeout);
  const endpoint: Endpoint = { ip: cluster.address(download.to), port: download.port };
  // only segments from anywhere but the address the client connected to, the handshake, every RST and ICMP:
  // the stream itself is thousands of packets
  const watch = await PacketWatch.start(target, ['-S', `icmp or (tcp and ((dst host ${client} and not src host ${endpoint.ip}) or (tcp[tcpflags] & (tcp-rst|tcp-syn) != 0)))`], watchedInterface(spec.from));
  const url = `http://${endpoint.ip}:${endpoint.port}/bytes/${download.bytes}`;
  let packets: Packet[] = [];
  let classified: Classified;
  let detail: Record<string, unknown>;
  try {
    // keepalive after 1 s idle: a connection reset while nothing was in flight (the server app-limited, say)
    // is then noticed within a second instead of at curl's default 60 s
    const r = await target.exec(['curl', '-sS', '--max-time', String(timeoutMs / 1000), '--keepalive-time', '1', '-o', '/dev/null', '-w', '%{http_code} %{size_download} %{time_connect} %{time_total} %{local_port} %header{x-served-by}', url], { reject: false, signal });
    const [code = '0', size = '0', connect = '0', total = '0', localPort = '0', servedBy = ''] = r.stdout.trim().split(' ');
    // parallel runs share the pod's interface: keep only this connection's packets
    const port = Number(localPort);
    packets = (await watch.stop()).filter((p) => port === 0 || (p.dst === client && p.dport === port) || (p.src === client && p.sport === port));
    classified = classifyDownload({ exitCode: r.exitCode, stderr: r.stderr, httpCode: Number(code), body: '', connectSeconds: Number(connect), bytes: download.bytes, sizeDownload: Number(size), servedBy }, packets, client, endpoint);
    detail = { url, curlExit: r.exitCode, httpCode: Number(code), bytes: Number(size), connectMs: Math.round(Number(connect) * 1e4) / 10, totalMs: Math.round(Number(total) * 1e4) / 10, curlError: r.stderr.trim() || undefined };
  } finally {
    await watch.stop();
  }
  return {
    outcome: classified.outcome,
    summary: `${spec.from} -> ${endpoint.ip}:${endpoint.port} = ${classified.outcome} (${classified.reason})`,
    connected: Number(detail.connectMs) > 0,
    servedBy: classified.servedBy,
    source: classified.source,
    durationMs: Math.round(performance.now() - started),
    detail: { ...detail, packets: packets.slice(0, 30).map((p) => p.line) },
  };
}

function lastLine(text: string): string {
  return text.trim().split('\n').filter(Boolean).pop() ?? '';
}
