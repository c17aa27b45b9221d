// `route: {on, to, via?, dev?, onlink?, op?}`: a route in a node's (or host's) table, e.g. a node's default route
// moved to another gateway, a route back to the pods an outside host lacks, or one deleted (a node left without
// its default route, a flannel subnet route gone); shown afterwards as proof, or shown gone.
import { z } from 'zod';
import { Cidr, Ipv4, TargetRef } from '../primitives.ts';
import { defineStep } from './step-kind.ts';

export const routeStep = defineStep({
  key: 'route',
  description:
    'add or replace a route (default or a CIDR) in a node, pod or host, via an address or directly on a device, or delete one; read back',
  schema: z
    .object({
      op: z
        .enum(['replace', 'delete'])
        .default('replace')
        .describe(
          'replace (add it, or change the one to the same destination) or delete (via and dev narrow which one)',
        ),
      on: TargetRef,
      to: z
        .union([
          z.literal('default'),
          z.literal('services'),
          Cidr,
          z.string().regex(/^lb\/[a-z][a-z0-9-]*$/, 'lb/NAME: a LoadBalancer Service'),
        ])
        .describe(
          "default, a CIDR, services: the cluster's Service range (its {cidr/services}), or lb/NAME: a LoadBalancer Service's address (/32), as a load balancer that keeps the client's address forwards it to a node",
        ),
      via: z
        .union([Ipv4, z.string().regex(/^(node|host|pod)\/[a-z][a-z0-9-]*$/, 'node/NAME, host/NAME or pod/NAME')])
        .optional(),
      dev: z
        .string()
        .regex(/^[a-zA-Z0-9_.-]{1,15}$/)
        .optional()
        .describe('the device the route leaves by (eth0 when one is added)'),
      onlink: z
        .boolean()
        .default(false)
        .describe('the gateway is on the link even though no subnet of the device holds it (ip route ... onlink)'),
    })
    .refine((s) => !s.onlink || s.via !== undefined, { message: 'onlink needs a gateway (via)', path: ['onlink'] })
    .refine((s) => !(s.onlink && s.op === 'delete'), {
      message: 'onlink is how a route is added; a deletion names it by destination, via and dev',
      path: ['onlink'],
    })
    .strict(),
  refs: (s) => [
    { ref: s.on, path: ['on'] },
    ...(s.via?.includes('/') ? [{ ref: s.via, path: ['via'] }] : []),
    ...(s.to.startsWith('lb/') ? [{ ref: s.to, path: ['to'] }] : []),
  ],
  expand: ({ op, on, to: dest, via, dev, onlink }, resolve) => {
    const to = dest === 'services' ? resolve('cidr/services') : dest.startsWith('lb/') ? `${resolve(dest)}/32` : dest;
    const gw = via === undefined ? undefined : via.includes('/') ? resolve(via) : via;
    if (op === 'delete') {
      const route = [to, ...(gw ? ['via', gw] : []), ...(dev ? ['dev', dev] : [])];
      return [
        { kind: 'command', on, argv: ['ip', 'route', 'del', ...route], expect: { exit: 0 }, timeoutMs: 10_000 },
        // gone: no route to that destination through that gateway and device is left
        {
          kind: 'command',
          on,
          argv: ['ip', 'route', 'show', 'exact', to === 'default' ? '0.0.0.0/0' : to, ...route.slice(1)],
          expect: { exit: 0, silent: true },
          timeoutMs: 10_000,
        },
      ];
    }
    const out = dev ?? 'eth0';
    const route = [to, ...(gw ? ['via', gw] : []), 'dev', out, ...(onlink ? ['onlink'] : [])];
    return [
      { kind: 'command', on, argv: ['ip', 'route', 'replace', ...route], expect: { exit: 0 }, timeoutMs: 10_000 },
      {
        kind: 'command',
        on,
        argv: ['ip', 'route', 'show', to === 'default' ? 'default' : `${to}`],
        expect: { exit: 0, prints: gw ? `via ${gw} dev ${out}${onlink ? '.* onlink' : ''}` : `dev ${out}` },
        timeoutMs: 10_000,
      },
    ];
  },
});
