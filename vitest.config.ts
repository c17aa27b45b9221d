import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // tests that start `node bin/netrepro.js` need dist/ current with the sources
    globalSetup: ['test/build-cli.ts'],
    // lab tests provision real namespaces; verdict deadlines are ~1 s, so this is a hang guard only
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // each file runs in its own process: labs of different files run side by side, proving isolation
    pool: 'forks',
  },
});
