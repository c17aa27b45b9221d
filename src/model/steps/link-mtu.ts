// `link-mtu: {on, dev, mtu}`: a link's MTU in a node or pod namespace (cni0, flannel.1, eth0, a veth),
// set and then shown: the MTU black holes of overlay networks start here.
import { z } from 'zod';
import { placeholderNeeds, targetNeeds } from '../capabilities.ts';
import { TargetRef } from '../primitives.ts';
import { defineStep } from './step-kind.ts';

export const linkMtuStep = defineStep({
  key: 'link-mtu',
  description:
    'set the MTU of a link in a node or pod namespace (e.g. flannel.1, cni0, eth0); shown afterwards as proof',
  schema: z
    .object({
      on: TargetRef,
      dev: z
        .string()
        .regex(/^[a-zA-Z0-9_.{}/+-]{1,40}$/, 'an interface name (placeholders such as {veth/web} allowed)')
        .describe('the interface'),
      mtu: z.number().int().min(68).max(65535).describe('the MTU to set'),
    })
    .strict(),
  refs: (s) => [{ ref: s.on, path: ['on'] }],
  requires: (s) => [...targetNeeds(s.on), ...placeholderNeeds([s.dev])],
  expand: ({ on, dev, mtu }, resolve) => {
    const name = dev.replace(/\{([a-z]+\/[a-z][a-z0-9-]*)\}/g, (_, ref: string) => resolve(ref));
    return [
      {
        kind: 'command',
        on,
        argv: ['ip', 'link', 'set', 'dev', name, 'mtu', String(mtu)],
        expect: { exit: 0 },
        timeoutMs: 10_000,
      },
      {
        kind: 'command',
        on,
        argv: ['ip', '-o', 'link', 'show', 'dev', name],
        expect: { exit: 0, prints: ` mtu ${mtu} ` },
        timeoutMs: 10_000,
      },
    ];
  },
});
