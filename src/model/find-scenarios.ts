// Finds scenario files by id in the scenarios directory, or takes paths as given.
import { HarnessError } from './errors.ts';
import { loadScenarioFile, type LoadedScenario } from './load-scenario.ts';
import { nearest } from './nearest.ts';
import { SCENARIO_DIR, scenarioFiles } from './scenario-files.ts';

export { SCENARIO_DIR, scenarioFiles };

export async function loadAllScenarios(dir = SCENARIO_DIR): Promise<LoadedScenario[]> {
  return Promise.all((await scenarioFiles(dir)).map((file) => loadScenarioFile(file)));
}

/**
 * `ids` are scenario ids or paths to YAML files. Paths load only themselves; an id is looked up among
 * the scenario files, and an invalid file elsewhere matters only when the id is not found.
 */
export async function selectScenarios(ids: readonly string[], dir = SCENARIO_DIR): Promise<LoadedScenario[]> {
  const isFile = (id: string) => id.endsWith('.yaml') || id.endsWith('.yml');
  const catalogue = ids.some((id) => !isFile(id))
    ? await Promise.allSettled((await scenarioFiles(dir)).map((file) => loadScenarioFile(file)))
    : [];
  const valid = catalogue.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  return Promise.all(
    ids.map(async (id) => {
      if (isFile(id)) return loadScenarioFile(id);
      const found = valid.find((s) => s.scenario.id === id);
      if (found) return found;
      const broken = catalogue.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (broken) throw broken.reason;
      const known = valid.map((s) => s.scenario.id);
      const guess = nearest(id, known);
      throw new HarnessError(
        'USAGE',
        `no scenario with id ${id}${guess ? ` (did you mean ${guess}?)` : ''}`,
        `known ids: ${known.join(', ')} (netrepro list)`,
      );
    }),
  );
}
