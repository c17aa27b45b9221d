// `netrepro import BUNDLE [-o FILE] [--id ID]`: a capture bundle as a replay scenario (docs/import.md). The file
// is validated as it is written: what import writes loads, or it fails here naming the field.
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { HarnessError } from '../../model/errors.ts';
import { loadScenarioFile, MAX_BYTES } from '../../model/load-scenario.ts';
import { packagePath } from '../../model/package-root.ts';
import { importScenario, scenarioYaml, withStateDirectories } from '../import/import-scenario.ts';
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
  let yaml = scenarioYaml(scenario, schema);
  // a state too large to carry inline goes to FILE.state/NODE/ beside the scenario, as the bundle named it
  let files = new Map<string, string>();
  if (Buffer.byteLength(yaml) > MAX_BYTES) {
    const moved = withStateDirectories(scenario, `${basename(file).replace(/\.ya?ml$/, '')}.state`);
    files = moved.files;
    yaml = scenarioYaml(moved.scenario, schema);
  }
  const bytes = Buffer.byteLength(yaml);
  if (bytes > MAX_BYTES)
    throw new HarnessError(
      'USAGE',
      `${bundlePath}: the replay would be ${bytes} bytes with its captured state in files beside it, over the ${MAX_BYTES} a scenario may be (${scenario.topology.pods.length} pods, ${(scenario.topology.services ?? []).length} services)`,
      'import a bundle of fewer objects (the probes grow with pods times Service ports)',
    );
  for (const [rel, content] of files) {
    await mkdir(dirname(join(dirname(file), rel)), { recursive: true });
    await writeFile(join(dirname(file), rel), content);
  }
  await writeFile(file, yaml);
  const { scenario: loaded } = await loadScenarioFile(file, { cached: false }).catch((e: Error) => {
    throw new HarnessError('COMMAND_FAILED', `${file}: the imported scenario does not validate:\n${e.message}`);
  });
  const shown = options.output ?? `${scenario.id}.yaml`;
  process.stdout.write(
    `${shown}: ${loaded.topology.nodes.length} nodes, ${loaded.topology.pods.length} pods, ${loaded.topology.services.length} services, ${loaded.probes.length} probes\n`,
  );
  const states = [...new Set([...files.keys()].map((f) => f.split('/')[0]))];
  if (states.length > 0)
    process.stdout.write(
      `${shown}: the captured state is in ${states.join(', ')}/ beside it (too large to carry inline): move them together\n`,
    );
  process.stdout.write(notReplayedLines(shown, loaded.topology.notReplayed));
  process.stdout.write(`run it: netrepro run ${shown}\n`);
}
