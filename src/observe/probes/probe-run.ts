// What every probe runner gets and shares: where the client is, where it sends to, a packet watch on
// the client's interface that ends the probe early on conclusive evidence, and how an Observation reads.
import type { StartedCluster, Target } from '../../contract/provider.ts';
import type { Observation } from '../../model/outcome.ts';
import { probeClient } from '../../model/probes/registry.ts';
import type { ProbeSpec } from '../../model/scenario-schema.ts';
import { durationMs } from '../../model/duration.ts';
import { foreignReply, ownFlow, type Classified, type Endpoint } from './classify.ts';
import { type AheadWatches, watchInterface } from './ahead-watches.ts';
import { probeAddresses } from './probe-addresses.ts';
import { capturedSince, PacketWatch, type Packet, type PacketView } from './packet-watch.ts';
import type { DropWatch } from '../trace/drop-verdict.ts';

export interface ProbeRun {
  spec: ProbeSpec;
  cluster: StartedCluster;
  signal: AbortSignal;
  /** Probe trace: the drop of a packet the client sent, once attributed (it then stops the probe). */
  dropped?: DropWatch;
  /** The client's address and where its commands run. */
  client: string;
  target: Target;
  /** The probe agent as the client runs it; undefined on a node without one (its provider lacks `node-agent`). */
  agent: readonly string[] | undefined;
  endpoint: Endpoint;
  timeoutMs: number;
  started: number;
  /** A run of a repeated probe: the packet watch its series shares. */
  series?: SeriesWatch;
  /** The phase's watches started ahead: a single probe takes its own from there. */
  ahead?: AheadWatches;
}

/**
 * The one packet watch the runs of a repeated probe share (one tcpdump per series instead of one per run),
 * started by the first run: a kind's filter is the same for every run, each run keeps its own packets.
 */
export class SeriesWatch {
  private watch?: Promise<PacketWatch>;

  open(target: Target, filter: string[], iface: string): Promise<PacketWatch> {
    return (this.watch ??= PacketWatch.start(target, filter, iface));
  }

  async stop(): Promise<void> {
    await (await this.watch?.catch(() => undefined))?.stop();
  }
}

/** Where and how one run of a probe happens. */
export interface ProbeRunOptions {
  /** The probe as the scenario declares it. */
  spec: ProbeSpec;
  /** The started cluster its client and target are in. */
  cluster: StartedCluster;
  /** Aborted at Ctrl-C or a deadline: the run stops at once. */
  signal: AbortSignal;
  /** The probe trace's drop of a packet the client sent: the verdict is called there. */
  dropped?: DropWatch;
  /** The packet watch a repeated probe's runs share. */
  series?: SeriesWatch;
  /** The phase's packet watches, started before its probes. */
  ahead?: AheadWatches;
}

/** The agent as `ref` runs it: a node runs none unless its cluster says which. */
function agentOn(cluster: StartedCluster, ref: string): readonly string[] | undefined {
  if (cluster.agentCommandOn) return cluster.agentCommandOn(ref);
  return ref.startsWith('node/') ? undefined : cluster.agentCommand;
}

export function probeRun({ spec, cluster, signal, dropped, series, ahead }: ProbeRunOptions): ProbeRun {
  const { client, endpoint } = probeAddresses(spec, cluster);
  return {
    spec,
    cluster,
    signal,
    dropped,
    client,
    target: cluster.target(probeClient(spec.from)),
    agent: agentOn(cluster, probeClient(spec.from)),
    endpoint,
    timeoutMs: durationMs(spec.timeout),
    started: performance.now(),
    series,
    ahead,
  };
}

/**
 * The run's packets: those `keep` selects of a watch on the client's interface with `filter` (its own,
 * started ahead or now, or its series').
 */
export async function startWatch(
  run: ProbeRun,
  filter: string[],
  keep: (p: Packet) => boolean = () => true,
): Promise<PacketView> {
  const iface = watchInterface(run.spec);
  if (run.series) return (await run.series.open(run.target, filter, iface)).window(keep);
  const ahead = run.ahead?.take(run.spec.id, run.target, iface, filter);
  const watch = (await ahead?.catch(() => undefined)) ?? (await PacketWatch.start(run.target, filter, iface));
  // started ahead: it has also seen what went before this run
  const since = ahead ? capturedSince(Date.now()) : () => true;
  const mine = watch.window((p) => since(p) && keep(p));
  return { ...mine, stop: () => watch.stop().then(() => mine.stop()) };
}

/**
 * Conclusive evidence ends the probe before its deadline: the client already RST a SYN-ACK from an
 * address it never contacted (TCP), or a DNS reply came from the wrong source (UDP).
 */
export function earlyVerdict(watch: PacketView, run: ProbeRun, sourcePort?: number): AbortController {
  const early = new AbortController();
  watch.onPacket((seen) => {
    const foreign = foreignReply(ownFlow(seen, run.client, run.endpoint, sourcePort), run.client, run.endpoint);
    if (foreign && (foreign.reply.proto === 'udp' || foreign.clientReset)) early.abort();
  });
  return early;
}

/** The Observation: one line a person reads, the outcome, and the evidence behind it. */
export function observation(
  run: ProbeRun,
  classified: Classified,
  detail: Record<string, unknown>,
  packets: readonly Packet[],
  tcp?: { connected: boolean; sentTo?: string },
): Observation {
  const { endpoint } = run;
  const rewritten =
    tcp?.sentTo && tcp.sentTo !== `${endpoint.ip}:${endpoint.port}` ? `; SYN sent to ${tcp.sentTo}` : '';
  return {
    outcome: classified.outcome,
    summary: `${run.spec.from} -> ${endpoint.ip}:${endpoint.port} = ${classified.outcome} (${classified.reason}${rewritten})`,
    ...tcp,
    servedBy: classified.servedBy,
    clientAddress: classified.clientAddress,
    source: classified.source,
    answers: classified.answers,
    durationMs: Math.round(performance.now() - run.started),
    detail: { ...detail, packets: packets.slice(0, 30).map((p) => p.line) },
  };
}

export function lastLine(text: string): string {
  return text.trim().split('\n').filter(Boolean).pop() ?? '';
}
