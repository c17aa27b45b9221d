// `netrepro import BUNDLE [-o FILE] [--id ID]`: a capture bundle as a replay scenario (docs/import.md). The file
// is validated as it is written: what import writes loads, or it fails here naming the field.
import { writeFile } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import { HarnessError } from '../../model/errors.ts';
import { loadScenarioFile } from '../../model/load-scenario.ts';
import { packagePath } from '../../model/package-root.ts';
import { importScenario, scenarioYaml } from '../import/import-scenario.ts';
import { readBundle } from '../import/read-bundle.ts';
import { notReplayedLines } from './validate.ts';

export interface ImportOptions {
  output?: string;
  id?: string;
}

export default async function importCommand(bundlePath: string, options: ImportOptions): Promise<void> {
  const bundle = await readBundle(bundlePath);
  const scenario = importScenario(bundle, options.id);
  const file = resolve(options.output ?? `${scenario.id}.yaml`);
  const schema = relative(dirname(file), packagePath('scenarios', 'scenario.schema.json'));
  await writeFile(file, scenarioYaml(scenario, schema));
  const { scenario: loaded } = await loadScenarioFile(file, { cached: false }).catch((e: Error) => {
    throw new HarnessError('COMMAND_FAILED', `${file}: the imported scenario does not validate:\n${e.message}`);
  });
  const shown = options.output ?? `${scenario.id}.yaml`;
  process.stdout.write(
    `${shown}: ${loaded.topology.nodes.length} nodes, ${loaded.topology.pods.length} pods, ${loaded.topology.services.length} services, ${loaded.probes.length} probes\n`,
  );
  process.stdout.write(notReplayedLines(shown, loaded.topology.notReplayed));
  process.stdout.write(`run it: netrepro run ${shown}\n`);
}
