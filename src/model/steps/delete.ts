// `delete: {pod}`: the pod is deleted as the API server, the EndpointSlice controller and the kubelet delete it:
// it leaves every Service's endpoints (kube-proxy syncs on every node, with the UDP conntrack clean-up of its
// release), then its sandbox is torn down (its processes killed, CNI DEL), so nothing holds its address any more.
// Later steps, probes and checks cannot name it.
import { z } from 'zod';
import { Name } from '../primitives.ts';
import { defineStep } from './step-kind.ts';

export const deleteStep = defineStep({
  key: 'delete',
  description:
    "a pod is deleted: it leaves its Services' endpoints (kube-proxy syncs) and its sandbox is torn down, so nothing answers at its address",
  schema: z.object({ pod: Name.describe('the pod to delete') }).strict(),
  refs: (s) => [{ ref: `pod/${s.pod}`, path: ['pod'] }],
  // a sandbox through the node's CNI chain: the Cilium shape makes its pods' endpoints another way
  cni: () => ['bridge', 'flannel'],
  expand: (s) => [{ kind: 'delete', pod: s.pod }],
  describe: (a) => (a.kind === 'delete' ? ['delete', `pod/${a.pod}`] : []),
});
