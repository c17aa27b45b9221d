// download probe runner: curl of GET /bytes/N from the pod agent; the packet watch keeps only what is
// not the normal stream (the handshake, RSTs, ICMP, segments from an address the client never contacted).
import type { Observation } from '../../../model/outcome.ts';
import type { ProbeSpec } from '../../../model/scenario-schema.ts';
import { classifyDownload } from '../classify.ts';
import { captureAtDrop, dropVerdict } from '../../trace/drop-verdict.ts';
import { observation, startWatch, type ProbeRun } from '../probe-run.ts';
import { downloadWatch } from '../watch-filters.ts';

export async function runDownload(run: ProbeRun, download: NonNullable<ProbeSpec['download']>): Promise<Observation> {
  const { client, target, endpoint, signal, dropped, timeoutMs } = run;
  const watch = await startWatch(run, downloadWatch(client, endpoint.ip));
  const url = `http://${endpoint.ip}:${endpoint.port}/bytes/${download.bytes}`;
  try {
    // keepalive after 1 s idle: a connection reset while nothing was in flight (the server app-limited, say)
    // is then noticed within a second instead of at curl's default 60 s
    const r = await target.exec(
      [
        'curl',
        '-sS',
        '--max-time',
        String(timeoutMs / 1000),
        '--keepalive-time',
        '1',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code} %{size_download} %{time_connect} %{time_total} %{local_port} %header{x-served-by} %header{x-client-address}',
        url,
      ],
      { reject: false, signal, stopWhen: dropped?.signal },
    );
    const [code = '0', size = '0', connect = '0', total = '0', localPort = '0', servedBy = '', clientAddress = ''] =
      r.stdout.trim().split(' ');
    // parallel runs share the pod's interface: keep only this connection's packets
    const port = Number(localPort);
    // reset: the RST that ended curl may still be on its way through tcpdump
    if (port && /reset/i.test(r.stderr))
      await watch.until(
        (seen) => seen.some((p) => p.flags?.startsWith('R') && (p.dport === port || p.sport === port)),
        100,
      );
    // stopped at a drop: the handshake (whether it connected) may still be on its way through tcpdump
    if (r.stopped && dropped?.drop) await captureAtDrop(watch, client, dropped.drop);
    const packets = (await watch.stop()).filter(
      (p) => port === 0 || (p.dst === client && p.dport === port) || (p.src === client && p.sport === port),
    );
    // the trace attributed a drop that repeats for every retransmission (a frag-needed dropped, say): the timeout, called now
    if (r.stopped && dropped?.drop) {
      const d = dropVerdict(packets, client, endpoint, String(dropped.drop));
      return {
        ...observation(run, d.classified, { url, curlExit: 'stopped: the trace attributed a drop' }, packets),
        connected: d.connected,
        answers: undefined,
      };
    }
    const classified = classifyDownload(
      {
        exitCode: r.exitCode,
        stderr: r.stderr,
        httpCode: Number(code),
        body: '',
        connectSeconds: Number(connect),
        bytes: download.bytes,
        sizeDownload: Number(size),
        servedBy,
        clientAddress,
      },
      packets,
      client,
      endpoint,
    );
    const connectMs = Math.round(Number(connect) * 1e4) / 10;
    const detail = {
      url,
      curlExit: r.exitCode,
      httpCode: Number(code),
      bytes: Number(size),
      connectMs,
      totalMs: Math.round(Number(total) * 1e4) / 10,
      curlError: r.stderr.trim() || undefined,
    };
    // the summary names no rewritten SYN for a download (its capture keeps the handshake for the source only)
    return { ...observation(run, classified, detail, packets), connected: connectMs > 0, answers: undefined };
  } finally {
    await watch.stop();
  }
}
