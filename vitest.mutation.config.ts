import { defineConfig } from 'vitest/config';

// The unit project's tests (vitest.config.ts) as Stryker runs them (stryker.config.mjs): no lab, no
// root. Stryker runs them in worker threads, where process.chdir() is refused: bad-input.test.ts, which
// runs the CLI from another directory, is left out (it judges input validation, no verdict module).
// No globalSetup: tests that start the compiled CLI run dist/, not the sandbox's mutated sources, and
// a rebuild there would compile Stryker's instrumented code.
export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/report/**/*.test.ts'],
    exclude: ['test/unit/bad-input.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
