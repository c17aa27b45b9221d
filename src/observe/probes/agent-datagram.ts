// What the dns and udp probes share when the pod agent sends the datagram (dns-query, udp-query): the agent
// reads the source of every reply on an unconnected socket, which the kernel never tells of an ICMP error,
// so the probe stops it when the capture shows an ICMP destination-unreachable about the datagram, or at a
// drop the probe trace attributed; what the agent printed is its result.
import { HarnessError } from '../../model/errors.ts';
import { dropVerdict } from '../trace/drop-verdict.ts';
import { icmpAboutQuery, type Classified, type DatagramReply, type DatagramResult } from './classify.ts';
import { PRINT_LAG_MS, type Packet, type PacketView } from './packet-watch.ts';
import type { ProbeRun } from './probe-run.ts';

export interface DatagramStops {
  /** Aborted when an ICMP destination-unreachable about the datagram reached the client. */
  icmp: AbortSignal;
  /** What ends the client early: that ICMP, or a drop the trace attributed. */
  stopWhen: AbortSignal;
  /**
   * The drop's verdict for a client stopped there with no ICMP about the datagram captured (that answer, had it
   * come, decides); undefined otherwise.
   */
  calledAtDrop(r: { stopped?: boolean }, packets: readonly Packet[]): Classified | undefined;
}

export function datagramStops(watch: PacketView, run: ProbeRun): DatagramStops {
  const { client, endpoint, dropped } = run;
  const icmp = new AbortController();
  watch.onPacket((seen) => {
    if (!icmp.signal.aborted && icmpAboutQuery(seen, client, endpoint)) icmp.abort();
  });
  return {
    icmp: icmp.signal,
    stopWhen: dropped ? AbortSignal.any([icmp.signal, dropped.signal]) : icmp.signal,
    calledAtDrop: (r, packets) =>
      r.stopped && dropped?.drop && !icmp.signal.aborted && !icmpAboutQuery(packets, client, endpoint)
        ? dropVerdict(packets, client, endpoint, String(dropped.drop)).classified
        : undefined,
  };
}

/**
 * Runs the agent's UDP client (`args` after the agent command) until it ends by itself at its first reply (from
 * the server or not), or a stop ends it: the packets, and either the verdict at a drop or the agent's result
 * (`unreachable` when an ICMP error stopped it before it printed; a reply it printed first still decides).
 */
export async function agentDatagram<R extends DatagramReply>(
  run: ProbeRun,
  watch: PacketView,
  stops: DatagramStops,
  args: string[],
): Promise<
  | { packets: Packet[]; atDrop: Classified; result?: undefined }
  | { packets: Packet[]; atDrop?: undefined; result: DatagramResult<R> }
> {
  const { agent, target, endpoint, signal, timeoutMs } = run;
  if (!agent)
    throw new HarnessError(
      'UNSUPPORTED',
      `${run.spec.from} cannot run the probe agent: its provider does not declare node-agent`,
      'run the probe from a pod, or with --provider netns or local',
    );
  const r = await target.exec([...agent, ...args], {
    signal,
    timeoutMs: timeoutMs + 5000,
    stopWhen: stops.stopWhen,
  });
  const printed = r.stdout.trim() ? (JSON.parse(r.stdout) as DatagramResult<R>) : undefined;
  // the agent read its first reply: the capture has it too, once tcpdump has printed it; to a client port known
  // beforehand, by that port, since a reply de-NATed on its way in to the client's own namespace (a node client
  // of its own hostPort) is captured only before, with the backend's address
  const first = printed?.replies[0];
  const sport =
    printed?.sport ??
    (Number(/^--sport=(\d+)$/.exec(args.find((a) => a.startsWith('--sport=')) ?? '')?.[1]) || undefined);
  if (first)
    await watch.until(
      (seen) =>
        seen.some(
          (p) =>
            p.proto === 'udp' &&
            p.dst === run.client &&
            (`${p.src}#${p.sport}` === first.from || (sport !== undefined && p.dport === sport)),
        ),
      PRINT_LAG_MS,
    );
  const packets = await watch.stop();
  const atDrop = printed ? undefined : stops.calledAtDrop(r, packets);
  if (atDrop) return { packets, atDrop };
  const result: DatagramResult<R> =
    printed ??
    (r.stopped
      ? { outcome: 'unreachable', server: `${endpoint.ip}#${endpoint.port}`, replies: [] }
      : (JSON.parse(r.stdout) as DatagramResult<R>));
  return { packets, result };
}
