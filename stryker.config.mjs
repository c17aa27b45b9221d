// `npm run mutation`: source-level mutation testing of the modules that decide verdicts (issue 20,
// part 7). Stryker changes one operator, condition or literal at a time and runs the unit tests that
// cover it; a mutant no test notices "survives". See docs/mutation-testing.md.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts', related: true },
  mutate: [
    'src/observe/expect/**/*.ts',
    'src/observe/probes/classify.ts',
    'src/engine/gate/**/*.ts',
    'src/engine/mutate/**/*.ts',
    'src/engine/run/failures.ts',
  ],
  coverageAnalysis: 'perTest',
  // two cores; a mutant's tests run in seconds, a hang is a mutant that loops
  concurrency: 2,
  timeoutMS: 20_000,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true, reportMutants: true },
  tempDirName: '.stryker-tmp',
  // Stryker rewrites tsconfig paths with the TypeScript 5 API, which TypeScript 7 (this repo's) does not
  // have; tsconfig.json points nowhere outside the repo, so there is nothing to rewrite: name no file
  tsconfigFile: 'no-tsconfig-to-rewrite.json',
  ignorePatterns: ['reports', '.stryker-tmp', '*.pcap'],
  cleanTempDir: true,
};
