// vitest globalSetup of the lab and host projects: starts the scenario suite once (test/suite-run.ts)
// and returns at once, so the unit and providers files (sequence.groupOrder 0 in vitest.config.ts) run
// while it does: a lab mostly waits (verdict deadlines, throttled downloads), the unit tests mostly
// compute. The observation is written to a file when the run ends; every lab and host file waits for
// that file before it starts (test/await-suite-run.ts), so no lab of theirs runs alongside the suite.
// Both projects list this file; the run is shared through globalThis (each project loads its own copy
// of this module in the same main process).
import { mkdtempSync, rmSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { observeSuiteRun, removeSuiteRun, type SuiteRun } from './observe-suite-run.ts';
import type {} from './suite-run.ts'; // the provided context's type (a type-only import: 'vitest' cannot load here)

const KEY = Symbol.for('netrepro.suiteRun');
const shared = globalThis as typeof globalThis & {
  [KEY]?: { run: Promise<SuiteRun | undefined>; dir: string; users: number };
};

/** The run, written to `file` as JSON once it has ended (renamed into place: a reader never sees half of it). */
async function runAndRecord(file: string): Promise<SuiteRun | undefined> {
  let run: SuiteRun | undefined;
  try {
    run = await observeSuiteRun();
  } catch (e) {
    run = { parallel: 0, reportDir: '', labLifetimes: {}, leftovers: [], error: (e as Error).stack ?? String(e) };
  }
  process.stderr.write(
    `netrepro: suite run ${run.skipped ? `skipped: ${run.skipped}` : run.error ? 'errored' : `${JSON.stringify(run.result?.summary)} in ${run.result?.durationMs} ms`}\n`,
  );
  await writeFile(`${file}.partial`, JSON.stringify(run));
  await rename(`${file}.partial`, file);
  return run;
}

export default function setup(project: TestProject): () => Promise<void> {
  if (!shared[KEY]) {
    process.stderr.write(
      'netrepro: running the scenario suite once (--parallel 2) for the lab and host tests, alongside the unit tests...\n',
    );
    const dir = mkdtempSync(join(tmpdir(), 'netrepro-suite-run-'));
    shared[KEY] = { run: runAndRecord(join(dir, 'suite-run.json')), dir, users: 0 };
  }
  const entry = shared[KEY];
  entry.users++;
  project.provide('suiteRunFile', join(entry.dir, 'suite-run.json'));
  return async () => {
    if (--entry.users > 0) return;
    const run = await entry.run;
    if (run) await removeSuiteRun(run);
    rmSync(entry.dir, { recursive: true, force: true });
  };
}
