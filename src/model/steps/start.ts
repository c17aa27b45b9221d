// `start: {node, component, version?}`: a node component (re)starts as the real one does: kube-proxy
// ensures its jumps (inserts only missing ones), Cilium re-inserts its feeder at the top, flanneld appends.
import { z } from 'zod';
import { COMPONENTS, KubeProxyVersion, Name } from '../primitives.ts';
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
    })
    .strict(),
  refs: (s) => [nodeRef(s.node)],
  requires: () => ['action/start'],
  cni: (s) => (s.component === 'kube-proxy' ? undefined : [s.component]),
  expand: (s) => [{ kind: 'start', ...s }],
  describe: (a) => (a.kind === 'start' ? ['start', a.component, ...(a.version ? [a.version] : [])] : []),
});
