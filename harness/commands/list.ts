// `netrepro list`: scenario ids and titles, or (--json) what a script needs to pick scenarios.
import { relative } from 'node:path';
import { loadAllScenarios } from '../model/find-scenarios.ts';

export default async function list(options: { json?: boolean }): Promise<void> {
  const scenarios = await loadAllScenarios();
  if (options.json) {
    const rows = scenarios.map(({ file, scenario }) => ({ id: scenario.id, title: scenario.title, file: relative(process.cwd(), file) || file, cni: scenario.topology.cni, incident: scenario.incident }));
    process.stdout.write(JSON.stringify(rows, null, 2) + '\n');
    return;
  }
  for (const { scenario } of scenarios) process.stdout.write(`${scenario.id.padEnd(40)} ${scenario.title}\n`);
}
