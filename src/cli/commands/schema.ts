// `netrepro schema`: the JSON Schema of scenario files, generated from the zod schema (for editors).
import { z } from 'zod';
import { ScenarioSchema } from '../../model/scenario-schema.ts';

export default function schema(): void {
  process.stdout.write(
    `${JSON.stringify(z.toJSONSchema(ScenarioSchema, { io: 'input', target: 'draft-2020-12' }), null, 2)}\n`,
  );
}
