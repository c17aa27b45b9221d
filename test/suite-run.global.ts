// vitest globalSetup of the lab and host projects: runs the scenario suite once (test/suite-run.ts)
// and hands the observation to their test files. Both projects list this file; the run is shared
// through globalThis (each project loads its own copy of this module in the same main process).
import type { TestProject } from 'vitest/node';
import { observeSuiteRun, removeSuiteRun, type SuiteRun } from './observe-suite-run.ts';
import type {} from './suite-run.ts'; // the provided context's type (a type-only import: 'vitest' cannot load here)

const KEY = Symbol.for('netrepro.suiteRun');
const shared = globalThis as typeof globalThis & { [KEY]?: { run: Promise<SuiteRun>; users: number } };

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (!shared[KEY]) {
    process.stderr.write('netrepro: running the scenario suite once (--parallel 2) for the lab and host tests...\n');
    shared[KEY] = { run: observeSuiteRun(), users: 0 };
  }
  const entry = shared[KEY];
  entry.users++;
  const run = await entry.run;
  if (entry.users === 1)
    process.stderr.write(
      `netrepro: suite run ${run.skipped ? `skipped: ${run.skipped}` : run.error ? 'errored' : `${JSON.stringify(run.result?.summary)} in ${run.result?.durationMs} ms`}\n`,
    );
  project.provide('suiteRun', run);
  return async () => {
    if (--entry.users === 0) await removeSuiteRun(run);
  };
}
