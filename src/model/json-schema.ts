// JSON Schema (draft 2020-12) from the zod schemas, in a form strict validators accept as it is: zod writes
// a union of primitive types as `type: [a, b]`, which Ajv's strict mode refuses without allowUnionTypes;
// `anyOf` says the same to every validator.
import { z } from 'zod';

type Json = unknown;

function withoutTypeArrays(node: Json): Json {
  if (Array.isArray(node)) return node.map(withoutTypeArrays);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, Json> = {};
  for (const [k, v] of Object.entries(node)) out[k] = withoutTypeArrays(v);
  if (Array.isArray(out.type)) {
    out.anyOf = (out.type as string[]).map((type) => ({ type }));
    delete out.type;
  }
  return out;
}

/** The schema's JSON Schema as its input (`io: 'input'`, defaults optional) or its output reads. */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output' = 'input'): Record<string, unknown> {
  return withoutTypeArrays(z.toJSONSchema(schema, { target: 'draft-2020-12', io })) as Record<string, unknown>;
}
