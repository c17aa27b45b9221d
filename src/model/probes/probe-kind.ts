// A probe kind as the scenario format sees it: its YAML key, schema, the references it names and where
// it sends to. Its runner (how it runs and is classified) lives one layer up, in src/observe/probes/kinds/,
// keyed by the same name: a new kind is those two modules and a line in each registry.
import type { z } from 'zod';

export interface ProbeKind<S extends z.ZodType = z.ZodType> {
  key: string;
  schema: S;
  description: string;
  /** The reference the probe sends to, its port, and the field that names it (for error messages). */
  destination(spec: z.output<S>): { ref: string; port: number; field: string };
  /** Whether the client runs the probe agent (the udp and dns clients that read every reply's source). */
  runsAgent?(spec: z.output<S>): boolean;
}

export function defineProbe<S extends z.ZodType>(kind: ProbeKind<S>): ProbeKind<S> {
  return kind;
}
