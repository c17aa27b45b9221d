// `netrepro mutate`: mutation testing. Remove the fault, remove each fix, swap each faulted outcome;
// every mutant must make the scenario fail (exit 1 when one survives).
import { usableProvider } from '../../providers/create-provider.ts';
import { resolveRunConfig } from '../../providers/run-config.ts';
import { EXIT } from '../exit-codes.ts';
import { interruptible } from '../interruptible.ts';
import { checkReportPaths } from '../report-paths.ts';
import { HarnessError } from '../../model/errors.ts';
import { loadAllScenarios, selectScenarios } from '../../model/find-scenarios.ts';
import { mutateAll, mutantLine, mutateJson, mutatePassed, mutateTable } from '../../engine/mutate/mutate-command.ts';
import { writeReport } from '../../report/write-report.ts';

export default async function mutate(
  ids: string[],
  options: { all?: boolean; provider: string; json?: string; parallel: number },
): Promise<number> {
  if (ids.length === 0 && !options.all)
    throw new HarnessError('USAGE', 'name scenario ids or files, or pass --all', 'netrepro list shows the ids');
  const { stdoutTaken } = await checkReportPaths([{ flag: '--json', what: 'mutants JSON', path: options.json }]);
  const scenarios = options.all ? await loadAllScenarios() : await selectScenarios(ids);
  const provider = await usableProvider(resolveRunConfig({ provider: options.provider }));
  const { signal, exitCode, labsDown } = interruptible();
  const result = await mutateAll(scenarios, {
    provider,
    signal,
    parallel: options.parallel,
    onMutant: (m) => process.stderr.write(`${mutantLine(m)}\n`),
  }).finally(labsDown);
  if (exitCode() !== undefined) return exitCode()!;
  (stdoutTaken ? process.stderr : process.stdout).write(mutateTable(result));
  if (options.json) await writeReport('mutants JSON', options.json, mutateJson(result));
  return mutatePassed(result) ? EXIT.ok : EXIT.failed;
}
