// Every step kind, by its YAML key. Adding a kind: its module in this directory and one line here.
import { z } from 'zod';
import { actionNeeds, placeholderNeeds, targetNeeds, type Capability } from '../capabilities.ts';
import { HarnessError } from '../errors.ts';
import type { Expanded, LabAction } from '../lab-action.ts';
import { brNetfilterStep } from './br-netfilter.ts';
import { cniChainStep } from './cni-chain.ts';
import { deleteStep } from './delete.ts';
import { endpointStep } from './endpoint.ts';
import { forwardPolicyStep } from './forward-policy.ts';
import { hairpinStep } from './hairpin.ts';
import { linkMtuStep } from './link-mtu.ts';
import { rebootStep } from './reboot.ts';
import { routeStep } from './route.ts';
import { runStep } from './run.ts';
import { serviceStep } from './service.ts';
import { sockLbDetachStaleStep } from './sock-lb-detach-stale.ts';
import { sockLbStaleProgramStep } from './sock-lb-stale-program.ts';
import { startStep } from './start.ts';
import type { StepKind } from './step-kind.ts';
import { sysctlStep } from './sysctl.ts';

export const STEP_KINDS = {
  run: runStep,
  sysctl: sysctlStep,
  'br-netfilter': brNetfilterStep,
  start: startStep,
  reboot: rebootStep,
  'sock-lb-stale-program': sockLbStaleProgramStep,
  'sock-lb-detach-stale': sockLbDetachStaleStep,
  'link-mtu': linkMtuStep,
  endpoint: endpointStep,
  delete: deleteStep,
  service: serviceStep,
  hairpin: hairpinStep,
  route: routeStep,
  'forward-policy': forwardPolicyStep,
  'cni-chain': cniChainStep,
} as const;

type Kinds = typeof STEP_KINDS;
type Shape = { [K in keyof Kinds]: z.ZodOptional<Kinds[K]['schema']> };

/** A step: exactly one of the kinds' keys. */
export const Step = z
  .object(
    Object.fromEntries(
      Object.entries(STEP_KINDS).map(([key, kind]) => [key, kind.schema.optional().describe(kind.description)]),
    ) as Shape,
  )
  .strict()
  .refine((s) => Object.keys(s).length === 1, 'each step has exactly one action');

export type StepSpec = z.output<typeof Step>;

/** The step's kind and its spec: `{sysctl: {...}}` -> [sysctlStep, {...}]. */
export function stepKindOf(step: StepSpec): [StepKind, unknown] {
  const [key, spec] = Object.entries(step)[0] ?? [];
  const kind = (STEP_KINDS as Record<string, StepKind>)[key ?? ''];
  if (!kind) throw new HarnessError('SCENARIO_INVALID', `unknown step: ${Object.keys(step).join(', ')}`);
  return [kind, spec];
}

export function expandStep(step: StepSpec, resolve: (ref: string) => string): Expanded[] {
  const [kind, spec] = stepKindOf(step);
  return kind.expand(spec, resolve);
}

/**
 * What a step needs from a provider: the kind's declared `requires`, plus what its expansion shows (each
 * command's target, each lab action, each lab-name placeholder it resolves), so a kind cannot forget one.
 */
export function stepRequires(step: StepSpec): Capability[] {
  const [kind, spec] = stepKindOf(step);
  const resolved: string[] = [];
  const expanded = kind.expand(spec, (ref) => (resolved.push(`{${ref}}`), '0.0.0.0'));
  const derived = expanded.flatMap((e): Capability[] => (e.kind === 'command' ? targetNeeds(e.on) : [actionNeeds(e)]));
  return [...new Set([...(kind.requires?.(spec) ?? []), ...derived, ...placeholderNeeds(resolved)])];
}

/** A lab action as words for reports, from the kind that produced it. */
export function describeLabAction(action: LabAction): string[] {
  return (STEP_KINDS as Record<string, StepKind>)[action.kind]?.describe?.(action) ?? [action.kind];
}
