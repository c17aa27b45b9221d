// `br-netfilter: {node, enabled}`: bridged traffic through iptables or not. Per network namespace since
// Linux 5.3, so 0 in one node's namespace is that node booting without the br_netfilter module.
import { z } from 'zod';
import { Name } from '../primitives.ts';
import { nodeRef, defineStep } from './step-kind.ts';
import { sysctlCommand } from './sysctl.ts';

export const brNetfilterStep = defineStep({
  key: 'br-netfilter',
  description: 'net.bridge.bridge-nf-call-iptables on a node: the module loaded or not',
  schema: z.object({ node: Name, enabled: z.boolean().describe('1 (the module loaded) or 0') }).strict(),
  refs: (s) => [nodeRef(s.node)],
  requires: () => ['node-exec'],
  expand: (s) => [sysctlCommand(`node/${s.node}`, 'net.bridge.bridge-nf-call-iptables', s.enabled ? 1 : 0)],
});
