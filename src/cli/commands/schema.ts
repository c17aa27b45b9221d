// `netrepro schema`: the JSON Schema of scenario files, generated from the zod schema (for editors).
import { jsonSchemaOf } from '../../model/json-schema.ts';
import { ScenarioSchema } from '../../model/scenario-schema.ts';

export default function schema(): void {
  process.stdout.write(`${JSON.stringify(jsonSchemaOf(ScenarioSchema), null, 2)}\n`);
}
