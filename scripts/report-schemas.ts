// Writes docs/schemas/*.schema.json from src/report/report-schema.ts (part of `npm run schema`).
import { writeFileSync } from 'node:fs';
import { reportJsonSchemas } from '../src/report/report-schema.ts';

for (const [name, schema] of Object.entries(reportJsonSchemas())) {
  writeFileSync(new URL(`../docs/schemas/${name}`, import.meta.url), `${JSON.stringify(schema, null, 2)}\n`);
}
