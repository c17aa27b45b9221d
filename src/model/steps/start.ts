// `start: {node, component, version?, clusterCIDR?, masqueradeAll?}`: a node component (re)starts as the real
// one does: kube-proxy ensures its jumps (inserts only missing ones) and rewrites its chains, with another
// release or configuration if given; Cilium re-inserts its feeder at the top, flanneld appends.
import { z } from 'zod';
import { COMPONENTS, KubeProxyConfigFields, KubeProxyVersion, Name } from '../primitives.ts';
import { nodeRef, defineStep } from './step-kind.ts';

export const startStep = defineStep({
  key: 'start',
  description:
    'a component (re)starts on a node: kube-proxy ensures its jumps (inserts only missing ones), Cilium re-inserts its feeder at the top',
  schema: z
    .object({
      node: Name,
      component: z.enum(COMPONENTS).describe('kube-proxy, cilium or flannel'),
      version: KubeProxyVersion.optional().describe('kube-proxy only: start this version'),
      ...KubeProxyConfigFields,
    })
    .strict()
    .refine((s) => s.component === 'kube-proxy' || (s.clusterCIDR === undefined && s.masqueradeAll === undefined), {
      message: 'clusterCIDR and masqueradeAll configure kube-proxy',
      path: ['component'],
    }),
  refs: (s) => [nodeRef(s.node)],
  cni: (s) => (s.component === 'kube-proxy' ? undefined : [s.component]),
  expand: ({ clusterCIDR, masqueradeAll, ...s }) => [
    {
      kind: 'start',
      ...s,
      ...(clusterCIDR !== undefined || masqueradeAll !== undefined
        ? {
            config: {
              ...(clusterCIDR !== undefined ? { clusterCIDR } : {}),
              ...(masqueradeAll !== undefined ? { masqueradeAll } : {}),
            },
          }
        : {}),
    },
  ],
  describe: (a) =>
    a.kind === 'start'
      ? [
          'start',
          a.component,
          ...(a.version ? [a.version] : []),
          ...Object.entries(a.config ?? {}).map(([k, v]) => `${k}=${v === '' ? '""' : v}`),
        ]
      : [],
});
