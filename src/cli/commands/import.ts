// `netrepro import BUNDLE [-o FILE] [--id ID]`: a capture bundle as a replay scenario (docs/import.md). The file
// is validated as it is written: what import writes loads, or it fails here naming the field.
import { writeFile } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import { HarnessError } from '../../model/errors.ts';
import { loadScenarioFile, MAX_BYTES } from '../../model/load-scenario.ts';
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
  const yaml = scenarioYaml(scenario, schema);
  const bytes = Buffer.byteLength(yaml);
  if (bytes > MAX_BYTES) {
    const sizes = scenario.topology.nodes.map(
      (n) => `${n.name} ${Buffer.byteLength(n.captured?.iptables ?? '')} bytes`,
    );
    throw new HarnessError(
      'USAGE',
      `${bundlePath}: the replay would be ${bytes} bytes, over the ${MAX_BYTES} a scenario may be: the captured state is carried inline and its iptables rules are too large (${sizes.join(', ')})`,
      'a replay of this size needs the state in files beside the scenario, which import does not write yet',
    );
  }
  await writeFile(file, yaml);
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
