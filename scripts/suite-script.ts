// What the bench and flake scripts share: --runs, the netns lab (exit 3 with the fix where it cannot
// run), every scenario or the ids named after the options, and an abort signal on Ctrl-C / SIGTERM
// (teardown still runs).
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { usableProvider } from '../src/providers/create-provider.ts';
import type { ClusterProvider } from '../src/contract/provider.ts';
import { HarnessError } from '../src/model/errors.ts';
import { loadAllScenarios, selectScenarios } from '../src/model/find-scenarios.ts';
import type { LoadedScenario } from '../src/model/load-scenario.ts';

export interface SuiteScript {
  runs: number;
  options: Record<string, string | undefined>;
  provider: ClusterProvider;
  scenarios: LoadedScenario[];
  signal: AbortSignal;
}

export async function setUpSuiteScript(
  name: string,
  defaultRuns: number,
  extra: NonNullable<ParseArgsConfig['options']> = {},
  usage = '',
): Promise<SuiteScript> {
  let values: Record<string, string | boolean | undefined>;
  let ids: string[];
  try {
    ({ values, positionals: ids } = parseArgs({
      allowPositionals: true,
      options: {
        runs: { type: 'string', default: String(defaultRuns) },
        out: { type: 'string', default: 'reports' },
        help: { type: 'boolean', short: 'h' },
        ...extra,
      },
    }));
  } catch (e) {
    console.error(`${name}: ${(e as Error).message}${usage ? `\n\n${usage}` : ''}`);
    process.exit(2);
  }
  if (values.help) {
    console.log(usage || `usage: npm run ${name} -- [--runs N] [--out DIR] [scenario ids...]`);
    process.exit(0);
  }
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1) {
    console.error(`${name}: --runs must be a whole number >= 1`);
    process.exit(2);
  }
  let provider: ClusterProvider;
  try {
    provider = await usableProvider('netns');
  } catch (e) {
    if (!(e instanceof HarnessError)) throw e;
    console.error(`${name}: ${e.message} (${e.hint})`);
    process.exit(3);
  }
  const controller = new AbortController();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => controller.abort());
  return {
    runs,
    options: values as Record<string, string | undefined>,
    provider,
    scenarios: ids.length ? await selectScenarios(ids) : await loadAllScenarios(),
    signal: controller.signal,
  };
}
