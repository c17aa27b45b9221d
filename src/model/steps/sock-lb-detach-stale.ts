// `sock-lb-detach-stale: {node}`: the stale socket-LB program is detached from every hook it holds.
import { z } from 'zod';
import { Name } from '../primitives.ts';
import { nodeRef, defineStep } from './step-kind.ts';

export const sockLbDetachStaleStep = defineStep({
  key: 'sock-lb-detach-stale',
  description: 'detach the stale socket-LB program',
  schema: z.object({ node: Name }).strict(),
  refs: (s) => [nodeRef(s.node)],
  requires: () => ['action/sock-lb-detach-stale'],
  cni: () => ['cilium'],
  expand: (s) => [{ kind: 'sock-lb-detach-stale', ...s }],
  describe: () => ['detach the stale socket-LB program'],
});
