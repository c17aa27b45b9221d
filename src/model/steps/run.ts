// `run: {on, cmd, background?, lead?, timeout?, expect?}`: any command on a node, pod, host or the fabric.
import { z } from 'zod';
import { placeholderNeeds, targetNeeds } from '../capabilities.ts';
import { durationMs } from '../duration.ts';
import { commandArgv, substitute, substitutePattern } from '../placeholders.ts';
import { Duration, TargetRef } from '../primitives.ts';
import { defineStep } from './step-kind.ts';

const StepExpect = z
  .object({
    exit: z
      .union([z.number().int().min(0).max(255), z.literal('any')])
      .default(0)
      .describe('the exit status the command must end with (default 0); `any` accepts every status'),
    prints: z
      .string()
      .optional()
      .describe(
        'regex a line of its output (stdout or stderr) must match: evidence that it did what it is for ({ns/default} and other placeholders resolved as literal text)',
      ),
  })
  .strict();

export const runStep = defineStep({
  key: 'run',
  description:
    'a command (argv, no shell) on a node, pod, host or the fabric; it must exit as expected and print its evidence',
  schema: z
    .object({
      on: TargetRef,
      cmd: z
        .union([z.string().min(1), z.array(z.string()).min(1)])
        .describe('argv, or a string split on spaces with quotes; no shell'),
      background: z
        .boolean()
        .default(false)
        .describe(
          'run alongside the probes instead of before them: started (after `lead`) right before the probes of this phase and of every later phase of the lab, awaited after them',
        ),
      lead: Duration.default(50).describe('background: head start before the probes begin'),
      timeout: Duration.default('30s').describe('the command is killed after this, which fails the step'),
      expect: StepExpect.default({ exit: 0 }).describe(
        'what proves the step did its job; a step that fails it makes the phase `errored`',
      ),
    })
    .strict(),
  refs: (s) => [{ ref: s.on, path: ['on'] }],
  requires: (s) => [...targetNeeds(s.on), ...placeholderNeeds(commandArgv(s.cmd))],
  expand: ({ on, cmd, background, lead, timeout, expect }, resolve) => [
    {
      kind: 'command',
      on,
      argv: substitute(commandArgv(cmd), resolve),
      expect: expect.prints === undefined ? expect : { ...expect, prints: substitutePattern(expect.prints, resolve) },
      timeoutMs: durationMs(timeout),
      ...(background ? { background: { leadMs: durationMs(lead) } } : {}),
    },
  ],
});
