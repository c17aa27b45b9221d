// `service: {name, type?, nodePorts?, externalTrafficPolicy?, internalTrafficPolicy?}`: a Service spec
// change (kubectl patch), after which kube-proxy syncs on every node: its chains are rewritten for the new
// spec and read back by the provider.
import { z } from 'zod';
import type { LabAction } from '../lab-action.ts';
import { Name, Port } from '../primitives.ts';
import { defineStep } from './step-kind.ts';

type ServiceAction = Extract<LabAction, { kind: 'service' }>;
const Policy = z.enum(['Cluster', 'Local']);

export const serviceStep = defineStep({
  key: 'service',
  description: 'a Service spec change (type, nodePorts, externalTrafficPolicy, internalTrafficPolicy), then kube-proxy syncs on every node',
  schema: z
    .object({
      name: Name,
      type: z.enum(['ClusterIP', 'NodePort']).optional().describe('the new type'),
      nodePorts: z.array(Port).min(1).optional().describe('type NodePort: the nodePort of each port, in port order'),
      externalTrafficPolicy: Policy.optional().describe('the new externalTrafficPolicy'),
      internalTrafficPolicy: Policy.optional().describe('the new internalTrafficPolicy'),
    })
    .strict()
    .refine((s) => Object.keys(s).length > 1, 'a service step changes at least one field'),
  refs: (s) => [{ ref: `svc/${s.name}`, path: ['name'] }],
  expand: (s) => [{ kind: 'service', ...s }],
  describe: (a) =>
    a.kind === 'service'
      ? [`patch svc/${a.name}`, ...Object.entries(a).filter(([k]) => k !== 'kind' && k !== 'name').map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(',') : String(v)}`)]
      : [],
});

interface ServiceFields {
  type: 'ClusterIP' | 'NodePort';
  externalTrafficPolicy: 'Cluster' | 'Local';
  internalTrafficPolicy: 'Cluster' | 'Local';
  ports: { nodePort?: number }[];
}

/** The service after the patch; the API server's own checks (nodePort needs NodePort) apply. */
export function changedService<S extends ServiceFields>(svc: S, a: ServiceAction): S {
  const type = a.type ?? svc.type;
  const ports = svc.ports.map((p, i) => {
    const nodePort = type === 'NodePort' ? (a.nodePorts?.[i] ?? p.nodePort) : undefined;
    if (type === 'NodePort' && nodePort === undefined) throw new Error(`service ${a.name}: type NodePort needs a nodePort for port ${i + 1} (nodePorts)`);
    const { nodePort: _old, ...rest } = p;
    return nodePort === undefined ? rest : { ...rest, nodePort };
  });
  return { ...svc, type, ports, externalTrafficPolicy: a.externalTrafficPolicy ?? svc.externalTrafficPolicy, internalTrafficPolicy: a.internalTrafficPolicy ?? svc.internalTrafficPolicy };
}
