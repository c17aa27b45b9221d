// The engine's one entry to probe tracing: `const trace = await startProbeTrace(cluster, flows)`,
// `trace.onDrop(cb)` while the probe runs, `await trace.stop()` for the events. A provider that
// cannot trace gets a session that records nothing and says why, so the probe runs as before.
import type { StartedCluster } from '../../contract/provider.ts';
import type { ProbeSpec } from '../../model/scenario-schema.ts';
import { probeAddresses } from '../probes/probe-addresses.ts';
import {
  tracingEnabled,
  type ProbeTraceResult,
  type ProbeTraceSession,
  type TraceFlows,
} from '../../model/trace-events.ts';

export async function startProbeTrace(
  cluster: StartedCluster,
  flows: TraceFlows,
  signal?: AbortSignal,
): Promise<ProbeTraceSession> {
  if (!tracingEnabled()) return untraced('tracing is off (NETREPRO_TRACE=0)');
  if (!cluster.startTrace) return untraced('this provider cannot trace packets');
  try {
    return await cluster.startTrace(flows, signal);
  } catch (e) {
    return untraced(`the trace did not start: ${(e as Error).message.split('\n')[0]}`);
  }
}

function untraced(reason: string): ProbeTraceSession {
  const result: ProbeTraceResult = { events: [], facts: [], unavailable: [reason], costMs: { start: 0, stop: 0 } };
  return { onDrop: () => {}, stop: async () => result };
}

/** The probe's addresses: its client (a pod by plain name, or `pod/`, `node/`, `host/`) and where it sends. */
export function probeFlows(spec: ProbeSpec, cluster: StartedCluster): TraceFlows {
  const { client, endpoint } = probeAddresses(spec, cluster);
  return { clientPod: spec.from, client, target: endpoint };
}
