// Finds scenario files by id in the scenarios directory, or takes paths as given.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HarnessError } from './errors.ts';
import { loadScenarioFile, type LoadedScenario } from './load-scenario.ts';

export const SCENARIO_DIR = fileURLToPath(new URL('../../scenarios/', import.meta.url));

export async function scenarioFiles(dir = SCENARIO_DIR): Promise<string[]> {
  return (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort().map((f) => join(dir, f));
}

export async function loadAllScenarios(dir = SCENARIO_DIR): Promise<LoadedScenario[]> {
  return Promise.all((await scenarioFiles(dir)).map(loadScenarioFile));
}

/** `ids` are scenario ids or paths to YAML files. */
export async function selectScenarios(ids: readonly string[], dir = SCENARIO_DIR): Promise<LoadedScenario[]> {
  const all = await loadAllScenarios(dir);
  return Promise.all(
    ids.map(async (id) => {
      if (id.endsWith('.yaml') || id.endsWith('.yml')) return loadScenarioFile(id);
      const found = all.find((s) => s.scenario.id === id);
      if (!found) throw new HarnessError('USAGE', `no scenario with id ${id}`, `known ids: ${all.map((s) => s.scenario.id).join(', ')} (netrepro list)`);
      return found;
    }),
  );
}
