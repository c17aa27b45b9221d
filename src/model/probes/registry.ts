// Every probe kind, by its YAML key. Adding a kind: its module here, its runner in src/observe/probes/kinds/,
// and one line in each registry.
import type { z } from 'zod';
import { HarnessError } from '../errors.ts';
import { dnsProbe } from './dns.ts';
import { downloadProbe } from './download.ts';
import { httpProbe } from './http.ts';
import type { ProbeKind } from './probe-kind.ts';
import { udpProbe } from './udp.ts';

export const PROBE_KINDS = { http: httpProbe, dns: dnsProbe, udp: udpProbe, download: downloadProbe } as const;
export type ProbeKindName = keyof typeof PROBE_KINDS;

type Kinds = typeof PROBE_KINDS;
/** The probe kinds as optional fields of a probe: exactly one is set. */
export const probeKindFields = Object.fromEntries(
  Object.entries(PROBE_KINDS).map(([key, kind]) => [key, kind.schema.optional().describe(kind.description)]),
) as {
  [K in keyof Kinds]: z.ZodOptional<Kinds[K]['schema']>;
};

/** The kind of a loaded probe and its spec: `{http: {...}}` -> ['http', {...}]. */
export function probeKindOf(probe: Partial<Record<ProbeKindName, unknown>>): [ProbeKindName, unknown] {
  const key = (Object.keys(PROBE_KINDS) as ProbeKindName[]).find((k) => probe[k] !== undefined);
  if (!key) throw new HarnessError('SCENARIO_INVALID', `a probe has none of: ${Object.keys(PROBE_KINDS).join(', ')}`);
  return [key, probe[key]];
}

/** Where a probe runs: a pod (a plain name), `pod/`, `node/` (its host network) or `host/` (outside the cluster). */
export const probeClient = (from: string) => (from.includes('/') ? from : `pod/${from}`);

/** Whether a probe's client runs the probe agent. */
export function probeRunsAgent(probe: Partial<Record<ProbeKindName, unknown>>): boolean {
  const [key, spec] = probeKindOf(probe);
  return (PROBE_KINDS[key] as ProbeKind).runsAgent?.(spec) ?? false;
}

/** Where a probe sends to: its kind's destination reference and port. */
export function probeDestination(probe: Partial<Record<ProbeKindName, unknown>>): {
  ref: string;
  port: number;
  field: string;
} {
  const [key, spec] = probeKindOf(probe);
  return (PROBE_KINDS[key] as ProbeKind).destination(spec);
}
