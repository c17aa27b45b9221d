// Runs one probe from its client and returns a structured Observation that prints its own evidence:
// `client -> 10.96.0.20:80 = unexpected-source (SYN-ACK from 10.244.1.3:8080 ...)`. Each probe kind
// has its runner in kinds/ (its declaration is in src/model/probes/).
import type { Observation } from '../../model/outcome.ts';
import { probeKindOf, type ProbeKindName } from '../../model/probes/registry.ts';
import type { ProbeSpec } from '../../model/scenario-schema.ts';
import { runDns } from './kinds/dns.ts';
import { runDownload } from './kinds/download.ts';
import { runHttp } from './kinds/http.ts';
import { runUdp } from './kinds/udp.ts';
import { probeRun, SeriesWatch, type ProbeRun, type ProbeRunOptions } from './probe-run.ts';
import { foldRuns, pooled } from './repeat-stats.ts';

/** Every probe kind's runner, by the key of its declaration. */
const RUNNERS: { [K in ProbeKindName]: (run: ProbeRun, spec: NonNullable<ProbeSpec[K]>) => Promise<Observation> } = {
  http: runHttp,
  dns: runDns,
  udp: runUdp,
  download: runDownload,
};

function runOnce(options: ProbeRunOptions): Promise<Observation> {
  const [kind, kindSpec] = probeKindOf(options.spec);
  return (RUNNERS[kind] as (run: ProbeRun, s: unknown) => Promise<Observation>)(probeRun(options), kindSpec);
}

/**
 * Runs the probe once, or `repeat` times (`parallel` at a time, sharing one packet watch) folded into one
 * Observation with the distribution of outcomes. A repeated probe's runs share their watch and are never
 * ended early by a drop.
 */
export async function runProbe(options: Omit<ProbeRunOptions, 'series'>): Promise<Observation> {
  const { spec } = options;
  if (spec.repeat === undefined) return runOnce(options);
  const started = performance.now();
  // one packet watch for the series; each run reads its own connection's packets from it
  const series = new SeriesWatch();
  const runs = await pooled(spec.repeat, spec.parallel, () =>
    runOnce({ spec, cluster: options.cluster, signal: options.signal, series }),
  ).finally(() => series.stop());
  const { endpoint } = probeRun({ spec, cluster: options.cluster, signal: options.signal });
  return foldRuns(`${spec.from} -> ${endpoint.ip}:${endpoint.port}`, runs, performance.now() - started);
}
