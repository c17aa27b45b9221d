// udp probe runner: one datagram by the pod agent (it reads the source of every reply), from a source port
// known before it is sent (the probe's own, or a fresh one per run) so that the run keeps only its own packets;
// the agent's UDP server answers with its name and the client address it saw.
import type { Observation } from '../../../model/outcome.ts';
import type { ProbeSpec } from '../../../model/scenario-schema.ts';
import { agentDatagram, datagramStops } from '../agent-datagram.ts';
import { classifyUdpAgent, type UdpEchoReply } from '../classify.ts';
import { observation, startWatch, type ProbeRun } from '../probe-run.ts';
import { nextSourcePort } from '../source-ports.ts';
import { udpWatch } from '../watch-filters.ts';

export async function runUdp(run: ProbeRun, udp: NonNullable<ProbeSpec['udp']>): Promise<Observation> {
  const { cluster, client, endpoint, timeoutMs } = run;
  const port = udp.sourcePort ?? nextSourcePort(cluster);
  const watch = await startWatch(
    run,
    udpWatch(udp.sourcePort),
    (p) => p.proto === 'icmp' || p.sport === port || p.dport === port,
  );
  const stops = datagramStops(watch, run);
  try {
    const exchange = await agentDatagram<UdpEchoReply>(run, watch, stops, [
      'udp-query',
      `--server=${endpoint.ip}`,
      `--port=${endpoint.port}`,
      `--timeout=${timeoutMs}`,
      `--sport=${port}`,
    ]);
    const { packets } = exchange;
    if (exchange.atDrop) return observation(run, exchange.atDrop, { sourcePort: port, replies: [] }, packets);
    return observation(
      run,
      classifyUdpAgent(exchange.result, packets, client),
      { sourcePort: port, replies: exchange.result.replies },
      packets,
    );
  } finally {
    await watch.stop();
  }
}
