// `service: {name, type?, nodePorts?, externalTrafficPolicy?, internalTrafficPolicy?, sessionAffinity?,
// sessionAffinityConfig?, ports?, labels?}`: a Service spec (or label) change (kubectl patch), after which kube-proxy syncs on
// every node: its chains are rewritten for the new spec and read back by the provider. `ports` replaces the
// whole list, as a patch of spec.ports does; the EndpointSlice's ports follow it.
import { z } from 'zod';
import type { LabAction } from '../lab-action.ts';
import {
  LabelKey,
  LabelValue,
  Name,
  Port,
  ServicePorts,
  SessionAffinity,
  SessionAffinityConfig,
} from '../primitives.ts';
import { defineStep } from './step-kind.ts';

type ServiceAction = Extract<LabAction, { kind: 'service' }>;
const Policy = z.enum(['Cluster', 'Local']);

export const serviceStep = defineStep({
  key: 'service',
  description:
    'a Service spec change (type, nodePorts, traffic policies, session affinity, ports), then kube-proxy syncs on every node',
  schema: z
    .object({
      name: Name,
      type: z.enum(['ClusterIP', 'NodePort']).optional().describe('the new type'),
      nodePorts: z.array(Port).min(1).optional().describe('type NodePort: the nodePort of each port, in port order'),
      externalTrafficPolicy: Policy.optional().describe('the new externalTrafficPolicy'),
      internalTrafficPolicy: Policy.optional().describe('the new internalTrafficPolicy'),
      sessionAffinity: SessionAffinity.optional().describe('the new sessionAffinity'),
      sessionAffinityConfig: SessionAffinityConfig.optional().describe('with sessionAffinity ClientIP: its timeout'),
      ports: ServicePorts.optional().describe(
        'the whole port list after the change: a port added, removed, or its number or protocol changed',
      ),
      labels: z
        .record(LabelKey, LabelValue.nullable())
        .optional()
        .describe('labels set (a value) or removed (null), as a merge patch of metadata.labels'),
    })
    .strict()
    .refine((s) => Object.keys(s).length > 1, 'a service step changes at least one field'),
  refs: (s) => [{ ref: `svc/${s.name}`, path: ['name'] }],
  expand: (s) => [{ kind: 'service', ...s }],
  describe: (a) =>
    a.kind === 'service'
      ? [
          `patch svc/${a.name}`,
          ...Object.entries(a)
            .filter(([k]) => k !== 'kind' && k !== 'name')
            .map(([k, v]) => `${k}=${describeValue(v)}`),
        ]
      : [],
});

/** ports as `80/TCP,80/UDP`, the affinity timeout as its seconds, lists joined by commas. */
function describeValue(v: unknown): string {
  if (Array.isArray(v))
    return v
      .map((x) => (typeof x === 'object' && x !== null && 'port' in x ? `${x.port}/${x.protocol ?? 'TCP'}` : String(x)))
      .join(',');
  if (typeof v === 'object' && v !== null && 'clientIP' in v)
    return `timeoutSeconds ${(v as { clientIP: { timeoutSeconds: number } }).clientIP.timeoutSeconds}`;
  if (typeof v === 'object' && v !== null)
    return Object.entries(v)
      .map(([k, x]) => (x === null ? `${k}-` : `${k}=${x}`))
      .join(',');
  return String(v);
}

type PortSpec = NonNullable<ServiceAction['ports']>[number];

interface ServiceFields {
  labels?: Record<string, string>;
  type: 'ClusterIP' | 'NodePort';
  externalTrafficPolicy: 'Cluster' | 'Local';
  internalTrafficPolicy: 'Cluster' | 'Local';
  sessionAffinity?: 'None' | 'ClientIP';
  sessionAffinityConfig?: { clientIP: { timeoutSeconds: number } };
  ports: PortSpec[];
}

/** The service after the patch; the API server's own checks (nodePort needs NodePort, a config needs ClientIP) apply. */
export function changedService<S extends ServiceFields>(svc: S, a: ServiceAction): S {
  const type = a.type ?? svc.type;
  const ports = (a.ports ?? svc.ports).map((p, i) => {
    const nodePort = type === 'NodePort' ? (a.nodePorts?.[i] ?? p.nodePort) : undefined;
    if (type === 'NodePort' && nodePort === undefined)
      throw new Error(`service ${a.name}: type NodePort needs a nodePort for port ${i + 1} (nodePorts)`);
    if (type !== 'NodePort' && a.ports && p.nodePort !== undefined)
      throw new Error(`service ${a.name}: nodePort on port ${i + 1} needs type NodePort`);
    const { nodePort: _old, ...rest } = p;
    return nodePort === undefined ? rest : { ...rest, nodePort };
  });
  const sessionAffinity = a.sessionAffinity ?? svc.sessionAffinity;
  // switching affinity off drops its config, as the API server's defaulting does
  const sessionAffinityConfig =
    sessionAffinity === 'ClientIP' ? (a.sessionAffinityConfig ?? svc.sessionAffinityConfig) : undefined;
  if (a.sessionAffinityConfig && sessionAffinity !== 'ClientIP')
    throw new Error(`service ${a.name}: sessionAffinityConfig needs sessionAffinity ClientIP`);
  const { sessionAffinity: _a, sessionAffinityConfig: _c, labels: _l, ...rest } = svc;
  const labels = Object.fromEntries(
    Object.entries({ ...svc.labels, ...a.labels }).filter((e): e is [string, string] => e[1] !== null),
  );
  return {
    ...rest,
    ...(Object.keys(labels).length > 0 ? { labels } : {}),
    type,
    ports,
    externalTrafficPolicy: a.externalTrafficPolicy ?? svc.externalTrafficPolicy,
    internalTrafficPolicy: a.internalTrafficPolicy ?? svc.internalTrafficPolicy,
    ...(sessionAffinity ? { sessionAffinity } : {}),
    ...(sessionAffinityConfig ? { sessionAffinityConfig } : {}),
  } as S;
}
