// `sysctl: {on, name, value}`: written, then read back (a read-only or missing key fails the step).
import { z } from 'zod';
import { targetNeeds } from '../capabilities.ts';
import type { Command } from '../lab-action.ts';
import { TargetRef } from '../primitives.ts';
import { defineStep } from './step-kind.ts';

export function sysctlCommand(on: string, name: string, value: string | number): Command {
  return {
    kind: 'command',
    on,
    argv: ['sysctl', '-w', `${name}=${value}`],
    expect: { exit: 0 },
    readBack: { argv: ['sysctl', '-n', name], value: String(value) },
    timeoutMs: 10_000,
  };
}

export const sysctlStep = defineStep({
  key: 'sysctl',
  description: 'a net.* sysctl in a node or pod namespace, read back after writing',
  schema: z
    .object({
      on: TargetRef,
      name: z
        .string()
        .regex(/^net\.[a-z0-9_.-]+$/, 'a net.* sysctl')
        .describe('the sysctl, net.*'),
      value: z.union([z.string(), z.number()]).describe('the value written and read back'),
    })
    .strict(),
  refs: (s) => [{ ref: s.on, path: ['on'] }],
  requires: (s) => targetNeeds(s.on),
  expand: (s) => [sysctlCommand(s.on, s.name, s.value)],
});
