// Runs one probe from its pod and returns a structured Observation that prints its own evidence:
// `client -> 10.96.0.20:80 = unexpected-source (SYN-ACK from 10.244.1.3:8080 ...)`.
import type { StartedCluster } from '../../clusters/provider.ts';
import type { Observation } from '../model/outcome.ts';
import type { ProbeSpec } from '../model/scenario-schema.ts';
import { commandArgv, placeholderResolver, substitute } from '../engine/expand-step.ts';
import { classifyCurl, classifyDnsAgent, classifyDownload, foreignReply, synDestination, type Classified, type DnsAgentResult, type Endpoint } from './classify.ts';
import { foldRuns, pooled } from './repeat-stats.ts';
import { PacketWatch, type Packet } from './packet-watch.ts';

export function durationMs(d: number | string): number {
  if (typeof d === 'number') return d;
  const n = Number.parseFloat(d);
  return d.endsWith('ms') ? n : n * 1000;
}

/**
 * Runs the probe once, or `repeat` times (`parallel` at a time) folded into one Observation with the
 * distribution of outcomes. `during` commands start before every run and are awaited after it.
 */
export async function runProbe(spec: ProbeSpec, cluster: StartedCluster, signal: AbortSignal): Promise<Observation> {
  if (spec.repeat === undefined) return runWithDuring(spec, cluster, signal);
  const started = performance.now();
  const runs = await pooled(spec.repeat, spec.parallel, () => runWithDuring(spec, cluster, signal));
  const to = spec.http ? `${cluster.address(spec.http.to)}:${spec.http.port}` : spec.download ? `${cluster.address(spec.download.to)}:${spec.download.port}` : `${cluster.address(spec.dns!.server)}:53`;
  return foldRuns(`${spec.from} -> ${to}`, runs, performance.now() - started);
}

async function runWithDuring(spec: ProbeSpec, cluster: StartedCluster, signal: AbortSignal): Promise<Observation> {
  if (!spec.during?.length) return runOnce(spec, cluster, signal);
  const resolve = placeholderResolver(cluster);
  const commands = spec.during.map((d) => ({ on: d.on, lead: durationMs(d.lead), argv: substitute(commandArgv(d.cmd), resolve), timeoutMs: durationMs(d.timeout) }));
  const running = commands.map((c) => cluster.target(c.on).exec(c.argv, { reject: false, signal, timeoutMs: c.timeoutMs }));
  try {
    const lead = Math.max(0, ...commands.map((c) => c.lead));
    await new Promise((r) => setTimeout(r, lead));
    const observation = await runOnce(spec, cluster, signal);
    const done = await Promise.all(running);
    const during = done.map((r, i) => ({ on: commands[i]!.on, argv: r.argv.slice(r.argv.indexOf('--') + 1), exit: r.timedOut ? 'killed at its timeout' : r.exitCode, output: parseOutput(r.stdout), stderr: r.stderr.trim().slice(-500) || undefined }));
    return { ...observation, detail: { ...observation.detail, during } };
  } finally {
    await Promise.allSettled(running);
  }
}

/** A during command's stdout: JSON when it printed JSON (the injector does), else its text. */
function parseOutput(stdout: string): unknown {
  const text = stdout.trim();
  try {
    return JSON.parse(text);
  } catch {
    return text.slice(-2000) || undefined;
  }
}

async function runOnce(spec: ProbeSpec, cluster: StartedCluster, signal: AbortSignal): Promise<Observation> {
  if (spec.download) return runDownload(spec, spec.download, cluster, signal);
  const started = performance.now();
  const client = cluster.address(`pod/${spec.from}`);
  const target = cluster.pod(spec.from);
  const timeoutMs = durationMs(spec.timeout);
  const endpoint: Endpoint = spec.http
    ? { ip: cluster.address(spec.http.to), port: spec.http.port }
    : { ip: cluster.address(spec.dns!.server), port: 53 };
  // concurrent runs of a repeated probe share the pod's interface: each connects from its own source
  // port and watches only that port, so no run calls its verdict on another run's packets
  const sourcePort = spec.http && spec.parallel > 1 ? nextSourcePort(cluster) : undefined;
  const watch = await PacketWatch.start(target, spec.http ? ['tcp', ...(sourcePort ? ['port', String(sourcePort)] : [])] : ['udp', 'port', '53']);
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
      const r = await target.exec(['curl', '-sS', '--max-time', String(timeoutMs / 1000), ...local, '-w', '\n%{http_code} %{time_connect}', url], { reject: false, signal, stopWhen: early.signal });
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
  const client = cluster.address(`pod/${spec.from}`);
  const target = cluster.pod(spec.from);
  const timeoutMs = durationMs(spec.timeout);
  const endpoint: Endpoint = { ip: cluster.address(download.to), port: download.port };
  // only segments from anywhere but the address the client connected to, and every RST: the stream itself is thousands of packets
  const watch = await PacketWatch.start(target, ['-S', `tcp and ((dst host ${client} and not src host ${endpoint.ip}) or (tcp[tcpflags] & tcp-rst != 0))`]);
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
