import { defineConfig } from 'vitest/config';
import { LongestFirst } from './test/sequencer.ts';

// Four projects, each runnable alone (`npm test -- --project unit`):
//   unit      no lab, no root: the model, classification, rule writers, the CLI (seconds)
//   providers the real-cluster providers against fake CLIs (no cluster, no root)
//   lab       real namespaces: lab lifecycle, each scenario's verdict and evidence, broken copies, the gate
//   host      what a run must never do to the machine: root capture, host state, isolation, crash + clean
// lab and host share ONE run of the whole scenario suite (test/suite-run.ts); their own tests add only
// what that run cannot show. It runs while the unit and providers files do (sequence.groupOrder 0),
// and the lab and host files (groupOrder 1) start once it has ended.
const SUITE_RUN = { globalSetup: ['test/suite-run.global.ts'], setupFiles: ['test/await-suite-run.ts'] };

export default defineConfig({
  test: {
    // tests that start `node bin/netrepro.js` need dist/ current with the sources (every project inherits it)
    globalSetup: ['test/build-cli.ts'],
    // lab tests provision real namespaces; verdict deadlines are ~1 s, so this is a hang guard only
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // each file runs in its own process; two at a time (vitest's default is cores - 1, one file at a
    // time on 2 cores): labs of different files then run side by side, as users' parallel runs do
    pool: 'forks',
    maxWorkers: 2,
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'test/report/**/*.test.ts'],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: 'providers', include: ['test/providers/**/*.test.ts'], sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: {
          name: 'lab',
          include: ['test/lab/**/*.test.ts', 'test/scenarios/**/*.test.ts'],
          ...SUITE_RUN,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: { name: 'host', include: ['test/host/**/*.test.ts'], ...SUITE_RUN, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
