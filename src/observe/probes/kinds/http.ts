// http probe runner: curl from the client while its interface is watched. The wire decides the outcome
// (classify.ts); a connect() that failed with no packet sent is named by its errno.
import type { Observation } from '../../../model/outcome.ts';
import type { ProbeSpec } from '../../../model/scenario-schema.ts';
import { captureAtDrop, dropVerdict } from '../../trace/drop-verdict.ts'; // an early verdict at an attributed drop
import { classifyCurl, connectAnswer, ownFlow, synDestination } from '../classify.ts';
import { earlyVerdict, observation, startWatch, type ProbeRun } from '../probe-run.ts';
import { nextSourcePort } from '../source-ports.ts';
import { toLocalhost } from '../probe-addresses.ts';
import { HTTP_WATCH } from '../watch-filters.ts';
import { PRINT_LAG_MS } from '../packet-watch.ts';
import { ROUTING_ERRNOS, type RouteLookup } from '../../trace/detectors/route-lookup.ts';

/** `ip -4 route get DEST` and the main table in the client's namespace: what its route lookup found. */
async function readRouting({ target, endpoint, signal }: ProbeRun): Promise<RouteLookup> {
  const read = async (argv: string[]) => {
    const r = await target.exec(argv, { reject: false, signal, timeoutMs: 5000 });
    return { command: argv.join(' '), output: `${r.stdout}${r.stderr}`.trim() };
  };
  const [get, table] = await Promise.all([
    read(['ip', '-4', 'route', 'get', endpoint.ip]),
    read(['ip', '-4', 'route', 'show', 'table', 'main']),
  ]);
  return { get, table };
}

/** strerror(3) of the errnos a connect() fails with at once, as bash prints them for a /dev/tcp redirection. */
const STRERROR: Record<string, string> = {
  'Network is unreachable': 'ENETUNREACH',
  'No route to host': 'EHOSTUNREACH',
  'Connection refused': 'ECONNREFUSED',
  'Connection timed out': 'ETIMEDOUT',
  'Connection reset by peer': 'ECONNRESET',
};

/**
 * The errno of one connect() from the client, for a curl that failed with no packet on the wire: the agent's
 * (it prints the errno's name), or where the client has none (a kind node), bash's /dev/tcp (it prints strerror).
 */
async function localErrno({ agent, target, endpoint, signal }: ProbeRun): Promise<string | undefined> {
  if (!agent) {
    const r = await target.exec(['timeout', '1', 'bash', '-c', `exec 3<>/dev/tcp/${endpoint.ip}/${endpoint.port}`], {
      reject: false,
      signal,
      timeoutMs: 5000,
    });
    return Object.entries(STRERROR).find(([text]) => r.stderr.includes(text))?.[1];
  }
  const r = await target.exec(
    [...agent, 'connect', `--server=${endpoint.ip}`, `--port=${endpoint.port}`, '--timeout=500'],
    { reject: false, signal, timeoutMs: 5000 },
  );
  try {
    return (JSON.parse(r.stdout) as { errno: string | null }).errno ?? undefined;
  } catch {
    return undefined;
  }
}

export async function runHttp(run: ProbeRun, http: NonNullable<ProbeSpec['http']>): Promise<Observation> {
  const { spec, cluster, target, endpoint, signal, dropped, timeoutMs } = run;
  // concurrent runs of a repeated probe share the pod's interface (and its packet watch): each connects from
  // its own source port and keeps only that port's packets, so no run calls its verdict on another run's;
  // a node's capture holds the node's own connections too (kubelet's, the API server's), and one of every
  // interface the client's other loopback connections
  const sourcePort =
    spec.parallel > 1 || spec.from.startsWith('node/') || toLocalhost(spec) ? nextSourcePort(cluster) : undefined;
  // ICMP too: an unreachable or a port-unreachable answering the client is what the application experienced
  const watch = await startWatch(
    run,
    HTTP_WATCH,
    sourcePort ? (p) => p.proto === 'icmp' || p.sport === sourcePort || p.dport === sourcePort : undefined,
  );
  const early = earlyVerdict(watch, run, sourcePort);
  try {
    const url = `http://${endpoint.ip}:${endpoint.port}${http.path}`;
    // --max-time is the verdict deadline: a hang is called after exactly that, never later
    const local = sourcePort ? ['--local-port', String(sourcePort)] : [];
    const r = await target.exec(
      [
        'curl',
        '-sS',
        '--max-time',
        String(timeoutMs / 1000),
        ...local,
        '-w',
        '\n%{http_code} %{time_connect} %header{x-client-address}',
        url,
      ],
      { reject: false, signal, stopWhen: dropped ? AbortSignal.any([early.signal, dropped.signal]) : early.signal },
    );
    // refused or unreachable at once: the answering packet may still be on its way through tcpdump
    if (r.exitCode === 7)
      await watch.until((seen) => seen.some((p) => p.dst === run.client || p.dport === sourcePort), PRINT_LAG_MS);
    // stopped at a drop, which the node saw before tcpdump here printed the client's side of it
    // (or the answer a REJECT sent back, which must decide instead of the drop)
    if (r.stopped && dropped?.drop) await captureAtDrop(watch, run.client, dropped.drop);
    const packets = ownFlow(await watch.stop(), run.client, endpoint, sourcePort);
    // a node connects from the address its route to the destination picks (its cni0's to its own pods), not
    // always its InternalIP: the SYN from the probe's own source port says which
    const client =
      (sourcePort && packets.find((p) => p.proto === 'tcp' && p.sport === sourcePort && p.flags === 'S')?.src) ||
      run.client;
    const { body, httpCode, connectSeconds, clientAddress } = curlWriteOut(r.stdout);
    // nothing left the client: only the errno of connect() says why (curl 7.88 does not print it)
    const silent = r.exitCode === 7 && !packets.some((p) => p.src === client);
    const errno = silent ? await localErrno(run) : undefined;
    // no route: what the lookup answers and the table it consulted, read in the client's namespace (no packet)
    const routeLookup = errno && ROUTING_ERRNOS.has(errno) ? await readRouting(run) : undefined;
    let classified = classifyCurl(
      {
        exitCode: r.exitCode,
        stderr: r.stderr,
        httpCode,
        body,
        connectSeconds,
        clientAddress,
        sourcePort,
      },
      packets,
      client,
      endpoint,
      errno,
    );
    const tcp = { connected: connectSeconds > 0, sentTo: synDestination(packets, client) };
    // a RST or ICMP answered the SYN: what the application got, whatever the trace saw dropped
    if (r.stopped && dropped?.drop && !early.signal.aborted && !connectAnswer(packets, client)) {
      const d = dropVerdict(packets, client, endpoint, String(dropped.drop));
      classified = d.classified;
      tcp.connected = d.connected;
    }
    const curlExit = r.stopped ? stopReason(early.signal.aborted) : r.exitCode;
    const detail = {
      url,
      curlExit,
      httpCode,
      connectMs: Math.round(connectSeconds * 1e4) / 10,
      curlError: r.stderr.trim() || undefined,
      ...(errno ? { connectErrno: errno } : {}),
      ...(routeLookup ? { routeLookup } : {}),
    };
    const answered = r.exitCode === 0 && httpCode > 0;
    return {
      ...observation(run, classified, detail, packets, tcp),
      ...(answered ? { httpStatus: httpCode } : {}),
      ...(answered ? localEndpointsOf(body) : {}),
    };
  } finally {
    await watch.stop();
  }
}

/** The body and, from the last line curl's -w wrote, the status code, the connect time and the address the server saw. */
function curlWriteOut(stdout: string): {
  body: string;
  httpCode: number;
  connectSeconds: number;
  clientAddress: string;
} {
  const lines = stdout.split('\n');
  const [code = '0', connect = '0', clientAddress = ''] = (lines.at(-1) ?? '').split(' ');
  return {
    body: lines.slice(0, -1).join('\n'),
    httpCode: Number(code),
    connectSeconds: Number(connect),
    clientAddress,
  };
}

/** The count a kube-proxy health check answers with (`"localEndpoints": N` in its JSON body), when the body is one. */
function localEndpointsOf(body: string): { localEndpoints?: number } {
  try {
    const n = (JSON.parse(body) as { localEndpoints?: unknown }).localEndpoints;
    return typeof n === 'number' ? { localEndpoints: n } : {};
  } catch {
    return {};
  }
}

/** Why curl was stopped before its end. */
function stopReason(conclusive: boolean): string {
  return conclusive ? 'stopped: the evidence was conclusive' : 'stopped: the trace attributed a drop';
}
