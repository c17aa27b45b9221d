// `service: {name, type?, nodePorts?, externalTrafficPolicy?, internalTrafficPolicy?, sessionAffinity?,
// sessionAffinityConfig?, ports?, loadBalancerSourceRanges?, labels?}`: a Service spec (or label) change (kubectl patch), after which kube-proxy syncs on
// every node: its chains are rewritten for the new spec and read back by the provider. `ports` replaces the
// whole list, as a patch of spec.ports does; the EndpointSlice's ports follow it.
import { z } from 'zod';
import type { LabAction } from '../lab-action.ts';
import {
  Cidr,
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
    'a Service spec change (type, nodePorts, traffic policies, session affinity, ports, load balancer source ranges), then kube-proxy syncs on every node',
  schema: z
    .object({
      name: Name,
      type: z.enum(['ClusterIP', 'NodePort']).optional().describe('the new type'),
      nodePorts: z.array(Port).min(1).optional().describe('type NodePort: the nodePort of each port, in port order'),
      externalTrafficPolicy: Policy.optional().describe('the new externalTrafficPolicy'),
      internalTrafficPolicy: Policy.optional().describe('the new internalTrafficPolicy'),
      sessionAffinity: SessionAffinity.optional().describe('the new sessionAffinity'),
      sessionAffinityConfig: SessionAffinityConfig.optional().describe('with sessionAffinity ClientIP: its timeout'),
      publishNotReadyAddresses: z.boolean().optional().describe('the new publishNotReadyAddresses'),
      ports: ServicePorts.optional().describe(
        'the whole port list after the change: a port added, removed, or its number or protocol changed',
      ),
      loadBalancerSourceRanges: z
        .array(Cidr)
        .min(1)
        .nullable()
        .optional()
        .describe('type LoadBalancer: the new source ranges (the whole list), or null to let every client in'),
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
  publishNotReadyAddresses: boolean;
  type: 'ClusterIP' | 'NodePort' | 'LoadBalancer';
  externalTrafficPolicy: 'Cluster' | 'Local';
  loadBalancerSourceRanges?: string[];
  healthCheckNodePort?: number;
  internalTrafficPolicy: 'Cluster' | 'Local';
  sessionAffinity?: 'None' | 'ClientIP';
  sessionAffinityConfig?: { clientIP: { timeoutSeconds: number } };
  ports: PortSpec[];
}

/** The service after the patch; the API server's own checks (nodePort needs NodePort, a config needs ClientIP) apply. */
export function changedService<S extends ServiceFields>(svc: S, a: ServiceAction): S {
  // a LoadBalancer's address comes from its (absent) cloud controller: it stays what the topology says
  if (svc.type === 'LoadBalancer' && a.type)
    throw new Error(`service ${a.name}: a LoadBalancer service keeps its type here`);
  if (svc.type === 'LoadBalancer' && a.externalTrafficPolicy === 'Local' && svc.externalTrafficPolicy !== 'Local')
    throw new Error(
      `service ${a.name}: externalTrafficPolicy Local on a LoadBalancer needs a healthCheckNodePort, which the topology names`,
    );
  if (a.loadBalancerSourceRanges !== undefined && svc.type !== 'LoadBalancer')
    throw new Error(`service ${a.name}: loadBalancerSourceRanges needs type LoadBalancer`);
  const type = a.type ?? svc.type;
  const withNodePorts = type !== 'ClusterIP';
  const ports = (a.ports ?? svc.ports).map((p, i) => {
    const nodePort = withNodePorts ? (a.nodePorts?.[i] ?? p.nodePort) : undefined;
    if (withNodePorts && nodePort === undefined)
      throw new Error(`service ${a.name}: type ${type} needs a nodePort for port ${i + 1} (nodePorts)`);
    if (!withNodePorts && a.ports && p.nodePort !== undefined)
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
  const {
    sessionAffinity: _a,
    sessionAffinityConfig: _c,
    labels: _l,
    loadBalancerSourceRanges: _r,
    healthCheckNodePort: _h,
    ...rest
  } = svc;
  const externalTrafficPolicy = a.externalTrafficPolicy ?? svc.externalTrafficPolicy;
  const sourceRanges =
    a.loadBalancerSourceRanges === undefined ? svc.loadBalancerSourceRanges : (a.loadBalancerSourceRanges ?? undefined);
  // the API server releases the health check's port when the policy goes back to Cluster
  const healthCheckNodePort = externalTrafficPolicy === 'Local' ? svc.healthCheckNodePort : undefined;
  const labels = Object.fromEntries(
    Object.entries({ ...svc.labels, ...a.labels }).filter((e): e is [string, string] => e[1] !== null),
  );
  return {
    ...rest,
    ...(Object.keys(labels).length > 0 ? { labels } : {}),
    type,
    ports,
    publishNotReadyAddresses: a.publishNotReadyAddresses ?? svc.publishNotReadyAddresses,
    externalTrafficPolicy,
    internalTrafficPolicy: a.internalTrafficPolicy ?? svc.internalTrafficPolicy,
    ...(sourceRanges ? { loadBalancerSourceRanges: sourceRanges } : {}),
    ...(healthCheckNodePort ? { healthCheckNodePort } : {}),
    ...(sessionAffinity ? { sessionAffinity } : {}),
    ...(sessionAffinityConfig ? { sessionAffinityConfig } : {}),
  } as S;
}
