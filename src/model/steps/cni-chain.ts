// `cni-chain: {node, plugins, recreate}`: the node's CNI network config list becomes `plugins` (a conflist
// rewritten by hand, a CNI upgrade that replaced it), and the pods in `recreate` get new sandboxes, as when
// they are deleted and come back: DEL through the chain each was made with (in reverse), ADD through the new
// one. A running pod never sees a conflist change; only a new sandbox does. A recreated pod gets a new
// address from host-local, so a pod that backs a Service is refused (its EndpointSlice would change too).
import { z } from 'zod';
import { CniChain, Name } from '../primitives.ts';
import { defineStep, nodeRef } from './step-kind.ts';

export const cniChainStep = defineStep({
  key: 'cni-chain',
  description:
    "the node's CNI chain becomes `plugins` and the pods in `recreate` get new sandboxes through it (DEL with the old chain, ADD with the new); read back from the node's NAT rules",
  schema: z
    .object({
      node: Name,
      plugins: CniChain,
      recreate: z
        .array(Name)
        .min(1)
        .describe('pods on that node whose sandboxes are recreated with the new chain (a new address each)'),
    })
    .strict(),
  refs: (s) => [nodeRef(s.node), ...s.recreate.map((pod, i) => ({ ref: `pod/${pod}`, path: ['recreate', i] }))],
  check: (s, topology) =>
    s.recreate.flatMap((name, i) => {
      const pod = topology.pods.find((p) => p.name === name);
      if (pod && pod.node !== s.node)
        return [
          {
            path: ['recreate', i],
            message: `pod ${name} runs on node ${pod.node}, not on ${s.node}`,
            received: name,
            expected: `a pod of node ${s.node}`,
          },
        ];
      const backs = topology.services.find((svc) => svc.endpoints.some((e) => e.pod === name));
      if (backs)
        return [
          {
            path: ['recreate', i],
            message: `pod ${name} backs svc/${backs.name}: a recreated pod's new address would change its EndpointSlice, which this step does not model`,
            received: name,
            expected: 'a pod that backs no Service',
          },
        ];
      return [];
    }),
  cni: () => ['bridge', 'flannel'],
  expand: (s) => [{ kind: 'cni-chain', ...s }],
  describe: (a) =>
    a.kind === 'cni-chain'
      ? ['cni-chain', `[${a.plugins.join(', ')}]`, 'recreates', ...a.recreate.map((p) => `pod/${p}`)]
      : [],
});
