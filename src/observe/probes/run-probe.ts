// Runs one probe from its client and returns a structured Observation that prints its own evidence:
// `client -> 10.96.0.20:80 = unexpected-source (SYN-ACK from 10.244.1.3:8080 ...)`. Each probe kind
// has its runner in kinds/ (its declaration is in src/model/probes/).
import type { StartedCluster } from '../../contract/provider.ts';
import type { Observation } from '../../model/outcome.ts';
import { probeKindOf, type ProbeKindName } from '../../model/probes/registry.ts';
import type { ProbeSpec } from '../../model/scenario-schema.ts';
import { runDns } from './kinds/dns.ts';
import { runDownload } from './kinds/download.ts';
import { runHttp } from './kinds/http.ts';
import type { AheadWatches } from './ahead-watches.ts';
import { probeRun, SeriesWatch, type ProbeRun } from './probe-run.ts';
import { foldRuns, pooled } from './repeat-stats.ts';


/** Every probe kind's runner, by the key of its declaration. */
const RUNNERS: { [K in ProbeKindName]: (run: ProbeRun, spec: NonNullable<ProbeSpec[K]>) => Promise<Observation> } = {
  http: runHttp,
  dns: runDns,
  download: runDownload,
};

function runOnce(spec: ProbeSpec, cluster: StartedCluster, signal: AbortSignal, dropped?: AbortSignal, series?: SeriesWatch, ahead?: AheadWatches): Promise<Observation> {
  const [kind, kindSpec] = probeKindOf(spec);
  return (RUNNERS[kind] as (run: ProbeRun, s: unknown) => Promise<Observation>)(probeRun(spec, cluster, signal, dropped, series, ahead), kindSpec);
}

/**
 * Runs the probe once, or `repeat` times (`parallel` at a time, sharing one packet watch) folded into one
 * Observation with the distribution of outcomes. `dropped` (probe trace): aborted when a packet the client sent was dropped.
 * `ahead`: the phase's packet watches, started before its probes ran.
 */
export async function runProbe(spec: ProbeSpec, cluster: StartedCluster, signal: AbortSignal, dropped?: AbortSignal, ahead?: AheadWatches): Promise<Observation> {
  if (spec.repeat === undefined) return runOnce(spec, cluster, signal, dropped, undefined, ahead);
  const started = performance.now();
  // one packet watch for the series; each run reads its own connection's packets from it
  const series = new SeriesWatch();
  const runs = await pooled(spec.repeat, spec.parallel, () => runOnce(spec, cluster, signal, undefined, series)).finally(() => series.stop());
  const { endpoint } = probeRun(spec, cluster, signal);
  return foldRuns(`${spec.from} -> ${endpoint.ip}:${endpoint.port}`, runs, performance.now() - started);
}
