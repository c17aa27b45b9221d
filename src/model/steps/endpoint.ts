// `endpoint: {service, pod, op, ready?, terminating?}`: an EndpointSlice change (a pod added, removed,
// becoming unready or terminating), after which kube-proxy syncs on every node as it does: its chains
// rewritten (stale KUBE-SVC/KUBE-SEP chains deleted, its jumps ensured) and, for UDP ports, the conntrack
// clean-up of its release. The provider reads the rules back and fails the step when they differ.
import { z } from 'zod';
import type { LabAction } from '../lab-action.ts';
import { Name } from '../primitives.ts';
import { defineStep } from './step-kind.ts';

type EndpointAction = Extract<LabAction, { kind: 'endpoint' }>;
interface EndpointEntry {
  pod: string;
  ready: boolean;
  terminating: boolean;
}

export const endpointStep = defineStep({
  key: 'endpoint',
  description:
    'an EndpointSlice change (add, remove, or set ready/terminating of a pod), then kube-proxy syncs on every node',
  schema: z
    .object({
      service: Name,
      pod: Name,
      op: z
        .enum(['add', 'remove', 'set'])
        .describe('add the pod as an endpoint, remove it (the pod is deleted), or set its conditions'),
      ready: z.boolean().optional().describe('add/set: the pod passes its readiness probe (default true on add)'),
      terminating: z.boolean().optional().describe('add/set: the pod is being deleted (default false on add)'),
    })
    .strict()
    .refine(
      (s) => s.op !== 'remove' || (s.ready === undefined && s.terminating === undefined),
      'remove takes no ready/terminating',
    )
    .refine(
      (s) => s.op !== 'set' || s.ready !== undefined || s.terminating !== undefined,
      'set names ready and/or terminating',
    ),
  refs: (s) => [
    { ref: `svc/${s.service}`, path: ['service'] },
    { ref: `pod/${s.pod}`, path: ['pod'] },
  ],
  expand: (s) => [{ kind: 'endpoint', ...s }],
  describe: (a) =>
    a.kind === 'endpoint'
      ? [
          `endpoint ${a.op}`,
          `svc/${a.service}`,
          `pod/${a.pod}`,
          ...(a.ready !== undefined ? [`ready=${a.ready}`] : []),
          ...(a.terminating !== undefined ? [`terminating=${a.terminating}`] : []),
        ]
      : [],
});

/** The service's endpoints after the change; an impossible change (remove a pod that is not there) throws. */
export function changedEndpoints(endpoints: readonly EndpointEntry[], a: EndpointAction): EndpointEntry[] {
  const i = endpoints.findIndex((e) => e.pod === a.pod);
  if (a.op === 'add') {
    if (i >= 0) throw new Error(`pod ${a.pod} is already an endpoint of ${a.service}`);
    return [...endpoints, { pod: a.pod, ready: a.ready ?? true, terminating: a.terminating ?? false }];
  }
  if (i < 0) throw new Error(`pod ${a.pod} is not an endpoint of ${a.service}`);
  if (a.op === 'remove') return endpoints.filter((e) => e.pod !== a.pod);
  return endpoints.map((e, j) =>
    j === i ? { ...e, ready: a.ready ?? e.ready, terminating: a.terminating ?? e.terminating } : e,
  );
}
