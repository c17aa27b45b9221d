// `netrepro list`: scenario ids and titles, or (--json) what a script needs to pick scenarios.
import { relative } from 'node:path';
import { scenarioCatalogue } from '../model/scenario-catalogue.ts';

export default async function list(options: { json?: boolean }): Promise<void> {
  const scenarios = await scenarioCatalogue();
  if (options.json) {
    const rows = scenarios.map((s) => ({ ...s, file: relative(process.cwd(), s.file) || s.file }));
    process.stdout.write(JSON.stringify(rows, null, 2) + '\n');
    return;
  }
  const width = Math.max(...scenarios.map((s) => s.id.length));
  for (const s of scenarios) process.stdout.write(`${s.id.padEnd(width)}  ${s.title}\n`);
}
