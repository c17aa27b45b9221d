// A step kind: everything about one kind of fault or fix step lives in its module (src/model/steps/),
// and adding a kind is that module plus one line in registry.ts. The scenario schema, reference checks,
// expansion and reports all read the kind from the registry.
import type { z } from 'zod';
import type { Capability } from '../capabilities.ts';
import type { CNI_SHAPES } from '../primitives.ts';
import type { Expanded, LabAction } from '../lab-action.ts';

/** A reference the step names (`node/x`, `pod/x`, `svc/x`...), with its path below the step's key. */
export interface StepRef {
  ref: string;
  path: (string | number)[];
}

/** A problem with a step that only the topology shows, with its path below the step's key. */
export interface StepIssue {
  path: (string | number)[];
  message: string;
  received?: string;
  expected?: string;
}

/** What a step's check reads of the topology (the schema's type would import this module back). */
export interface StepTopology {
  pods: readonly { name: string; node: string }[];
  services: readonly { name: string; endpoints: readonly { pod: string }[] }[];
}

export interface StepKind<S extends z.ZodType = z.ZodType> {
  /** The YAML key: `- sysctl: {...}`. */
  key: string;
  schema: S;
  /** One line for editors and the JSON Schema. */
  description: string;
  /** References to check against the topology. */
  refs(spec: z.output<S>): StepRef[];
  /** What the step asks of the topology beyond the names it references (a pod on the node it names...). */
  check?(spec: z.output<S>, topology: StepTopology): StepIssue[];
  /** The CNI shapes this step can run in (default: every shape). */
  cni?(spec: z.output<S>): readonly (typeof CNI_SHAPES)[number][] | undefined;
  /**
   * What the step needs from a provider beyond pods (a node's namespace, a lab action, a lab path); a
   * provider without one skips the scenario before provisioning. Needs its expansion shows (targets,
   * lab actions, placeholders) are added by the registry, so this names the kind's own.
   */
  requires?(spec: z.output<S>): Capability[];
  /** The commands and lab actions this step is made of, placeholders resolved. */
  expand(spec: z.output<S>, resolve: (ref: string) => string): Expanded[];
  /** A lab action as words for reports (`start kube-proxy 1.15`); kinds that expand to commands have none. */
  describe?(action: LabAction): string[];
}

/** Declares a kind with its spec type inferred from its schema. */
export function defineStep<S extends z.ZodType>(kind: StepKind<S>): StepKind<S> {
  return kind;
}

/** `{node}` -> a node reference at `[node]`. */
export const nodeRef = (node: string): StepRef => ({ ref: `node/${node}`, path: ['node'] });
