// `reboot: {node, order?}`: the node's iptables rules and conntrack table are emptied, then its
// components come up in `order`: the real trigger of a FORWARD reordering.
import { z } from 'zod';
import { COMPONENTS, Name } from '../primitives.ts';
import { nodeRef, defineStep } from './step-kind.ts';

export const rebootStep = defineStep({
  key: 'reboot',
  description:
    'the node reboots: its iptables rules and conntrack table are emptied, then the components start in `order`',
  schema: z
    .object({
      node: Name,
      order: z
        .array(z.enum(COMPONENTS))
        .optional()
        .describe('the order the components come up in after the reboot (default: topology.startOrder)'),
    })
    .strict(),
  refs: (s) => [nodeRef(s.node)],
  requires: () => ['action/reboot'],
  expand: (s) => [{ kind: 'reboot', ...s }],
  describe: (a) => (a.kind === 'reboot' ? ['reboot', ...(a.order ? ['then start', a.order.join(', ')] : [])] : []),
});
