// `netrepro list`: scenario ids and titles, or (--json) what a script needs to pick scenarios.
import { relative } from 'node:path';
import { scenarioCatalogue } from '../../model/scenario-catalogue.ts';

export default async function list(options: { json?: boolean }): Promise<void> {
  const scenarios = await scenarioCatalogue();
  if (options.json) {
    const rows = scenarios.map((s) => ({ ...s, file: relative(process.cwd(), s.file) || s.file }));
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return;
  }
  process.stdout.write(listLines(scenarios));
}

/** One line per scenario, titles aligned after the longest id. */
export function listLines(scenarios: readonly { id: string; title: string }[]): string {
  const width = Math.max(0, ...scenarios.map((s) => s.id.length));
  return scenarios.map((s) => `${s.id.padEnd(width)}  ${s.title}\n`).join('');
}
