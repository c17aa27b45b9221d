// `forward-policy: {node, policy}`: the policy of a node's filter FORWARD chain (Docker sets DROP when it
// starts; then only ACCEPT rules such as KUBE-FORWARD's or flanneld's let pod traffic through). Read back.
import { z } from 'zod';
import { Name } from '../primitives.ts';
import { defineStep, nodeRef } from './step-kind.ts';

export const forwardPolicyStep = defineStep({
  key: 'forward-policy',
  description: "the policy of a node's FORWARD chain (ACCEPT or DROP, as Docker sets it), read back from iptables -S",
  schema: z.object({ node: Name, policy: z.enum(['ACCEPT', 'DROP']).describe("the FORWARD chain's policy") }).strict(),
  refs: (s) => [nodeRef(s.node)],
  expand: ({ node, policy }) => [
    {
      kind: 'command',
      on: `node/${node}`,
      argv: ['iptables', '-w', '-P', 'FORWARD', policy],
      expect: { exit: 0 },
      timeoutMs: 10_000,
    },
    {
      kind: 'command',
      on: `node/${node}`,
      argv: ['iptables', '-w', '-S', 'FORWARD'],
      expect: { exit: 0, prints: `^-P FORWARD ${policy}$` },
      timeoutMs: 10_000,
    },
  ],
});
