// `route: {on, to, via?, dev?, onlink?}`: a route in a node's (or host's) table, e.g. a node's default route
// moved to another gateway or a route back to the pods an outside host lacks; shown afterwards as proof.
import { z } from 'zod';
import { Cidr, Ipv4, TargetRef } from '../primitives.ts';
import { defineStep } from './step-kind.ts';

export const routeStep = defineStep({
  key: 'route',
  description:
    'add or replace a route (default or a CIDR) in a node, pod or host, via an address or directly on a device; read back',
  schema: z
    .object({
      on: TargetRef,
      to: z.union([z.literal('default'), Cidr]),
      via: z
        .union([Ipv4, z.string().regex(/^(node|host|pod)\/[a-z][a-z0-9-]*$/, 'node/NAME, host/NAME or pod/NAME')])
        .optional(),
      dev: z
        .string()
        .regex(/^[a-zA-Z0-9_.-]{1,15}$/)
        .default('eth0')
        .describe('the device the route leaves by'),
      onlink: z
        .boolean()
        .default(false)
        .describe('the gateway is on the link even though no subnet of the device holds it (ip route ... onlink)'),
    })
    .refine((s) => !s.onlink || s.via !== undefined, { message: 'onlink needs a gateway (via)', path: ['onlink'] })
    .strict(),
  refs: (s) => [{ ref: s.on, path: ['on'] }, ...(s.via?.includes('/') ? [{ ref: s.via, path: ['via'] }] : [])],
  expand: ({ on, to, via, dev, onlink }, resolve) => {
    const gw = via === undefined ? undefined : via.includes('/') ? resolve(via) : via;
    const route = [to, ...(gw ? ['via', gw] : []), 'dev', dev, ...(onlink ? ['onlink'] : [])];
    return [
      { kind: 'command', on, argv: ['ip', 'route', 'replace', ...route], expect: { exit: 0 }, timeoutMs: 10_000 },
      {
        kind: 'command',
        on,
        argv: ['ip', 'route', 'show', to === 'default' ? 'default' : `${to}`],
        expect: { exit: 0, prints: gw ? `via ${gw} dev ${dev}${onlink ? '.* onlink' : ''}` : `dev ${dev}` },
        timeoutMs: 10_000,
      },
    ];
  },
});
