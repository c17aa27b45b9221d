// `sock-lb-stale-program`: an older socket-LB program with its own, outdated service map, attached to the
// pods' cgroup next to the current one (BPF_F_ALLOW_MULTI programs run in attach order).
import { z } from 'zod';
import { Name, Port, Ref, SOCK_LB_HOOKS } from '../primitives.ts';
import { nodeRef, defineStep } from './step-kind.ts';

export const sockLbStaleProgramStep = defineStep({
  key: 'sock-lb-stale-program',
  description:
    'an older socket-LB program with its own service map, attached before the current one (FIFO: runs first)',
  schema: z
    .object({
      node: Name,
      service: Ref,
      port: Port,
      backend: z
        .string()
        .regex(/^\d+\.\d+\.\d+\.\d+:\d+$/, 'IP:PORT')
        .describe('IP:PORT the stale map still sends the Service to'),
      first: z
        .boolean()
        .default(true)
        .describe('attached before the current program (it was there first); false attaches it after'),
      hook: z
        .enum(SOCK_LB_HOOKS)
        .default('connect4')
        .describe('the hook the stale program holds: connect4 (TCP) or sendmsg4 (UDP, e.g. DNS)'),
    })
    .strict(),
  refs: (s) => [nodeRef(s.node), { ref: s.service, path: ['service'] }],
  requires: () => ['action/sock-lb-stale-program'],
  cni: () => ['cilium'],
  expand: (s) => [{ kind: 'sock-lb-stale-program', ...s }],
  describe: (a) =>
    a.kind === 'sock-lb-stale-program'
      ? [
          `attach a stale ${a.hook} socket-LB program ${a.first ? 'before' : 'after'} the current one:`,
          `${a.service}:${a.port} -> ${a.backend}`,
        ]
      : [],
});
