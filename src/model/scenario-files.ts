// Where scenario files are: the package's scenarios/ directory, every *.yaml in it and in its folders
// (scenarios/upstream-e2e/: ports of Kubernetes' own e2e tests), sorted by path.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { packagePath } from './package-root.ts';

export const SCENARIO_DIR = packagePath('scenarios');

export async function scenarioFiles(dir = SCENARIO_DIR): Promise<string[]> {
  return (await readdir(dir, { recursive: true }))
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => join(dir, f));
}
