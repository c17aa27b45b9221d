// `hairpin: {on: node/NAME, pod, enabled}`: hairpin mode of the pod's port on the node's bridge (cni0).
// Off, a packet the bridge would send back out of the port it came in on is dropped: a pod reaching itself
// through its own Service. Read back from `bridge -d link show`.
import { z } from 'zod';
import { Name } from '../primitives.ts';
import { defineStep } from './step-kind.ts';

export const hairpinStep = defineStep({
  key: 'hairpin',
  description:
    "hairpin mode of a pod's port on the node's cni0 bridge (bridge link set dev VETH hairpin on|off), read back",
  schema: z
    .object({
      on: z
        .string()
        .regex(/^node\/[a-z][a-z0-9-]*$/, 'node/NAME: the node the pod runs on')
        .describe('node/NAME: the node the pod runs on'),
      pod: Name,
      enabled: z.boolean().describe('hairpin mode on or off'),
    })
    .strict(),
  refs: (s) => [
    { ref: s.on, path: ['on'] },
    { ref: `pod/${s.pod}`, path: ['pod'] },
  ],
  cni: () => ['bridge', 'flannel'],
  expand: ({ on, pod, enabled }, resolve) => {
    const dev = resolve(`veth/${pod}`);
    const mode = enabled ? 'on' : 'off';
    return [
      {
        kind: 'command',
        on,
        argv: ['bridge', 'link', 'set', 'dev', dev, 'hairpin', mode],
        expect: { exit: 0 },
        timeoutMs: 10_000,
      },
      {
        kind: 'command',
        on,
        argv: ['bridge', '-d', 'link', 'show', 'dev', dev],
        expect: { exit: 0, prints: `hairpin ${mode} ` },
        timeoutMs: 10_000,
      },
    ];
  },
});
