// The one run of the whole scenario suite per `npm test`, as the lab and host test files see it.
// Every assertion about the suite reads it from here instead of running the suite again:
//   - test/scenarios/*: each scenario passes, its evidence, its captures (the run's report dir is
//     RELATIVE, so evidence commands on a cilium node, which run with cwd /, are covered too);
//   - test/host/root-capture: no lab packet on any root-namespace interface while the suite ran, and
//     the root namespace and host state before and after it;
//   - test/host/parallel-isolation: which labs were alive at the same time (the suite runs with
//     --parallel 2, every lab using the same names and addresses), and that nothing changed outcome.
// A test that needs a scenario's normal observations (e.g. mutants compared with the original, as
// `netrepro mutate` does) takes them from `suiteRun().result`; another whole-suite observation
// belongs in observeSuiteRun (test/observe-suite-run.ts), so it is made in the same single run.
import { existsSync, readFileSync } from 'node:fs';
import { inject } from 'vitest';
import type { SuiteRun } from './observe-suite-run.ts';

export type { SuiteRun } from './observe-suite-run.ts';
export { PACKET, TCPDUMP } from './observe-suite-run.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where the suite run's observation is written, as JSON, once the run has ended. */
    suiteRunFile: string;
  }
}

/** Resolves once the suite run has ended (its file is there); every lab and host file waits for it first. */
export async function awaitSuiteRun(): Promise<void> {
  while (!existsSync(inject('suiteRunFile'))) await new Promise((resolve) => setTimeout(resolve, 250));
}

let observed: SuiteRun | undefined;

/** The one suite run, in a test file of the lab or host project (ended before any of them started). */
export function suiteRun(): SuiteRun {
  observed ??= JSON.parse(readFileSync(inject('suiteRunFile'), 'utf8')) as SuiteRun;
  return observed;
}

/**
 * Why tests reading the suite run are skipped: no lab here, or NETREPRO_SUITE_RUN=skip (to run one
 * lab or host file alone without the suite first; never under CI, where every lab test must run).
 */
export function suiteSkipReason(): string | undefined {
  const { skipped } = suiteRun();
  if (skipped && process.env.NETREPRO_SUITE_RUN === 'skip' && process.env.CI === 'true')
    throw new Error('CI=true: NETREPRO_SUITE_RUN=skip would skip lab tests');
  return skipped;
}
