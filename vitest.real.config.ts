import { defineConfig } from 'vitest/config';

// `npm run test:real`: the `local` provider's real Kubernetes cluster (needs root and the one-time build,
// `npm run build:kubernetes`, which test:real runs first). Not part of `npm test`. One file at a time:
// each cluster takes ~0.7-1 GB and most of a core while it starts.
export default defineConfig({
  test: {
    globalSetup: ['test/build-cli.ts'],
    testTimeout: 600_000,
    hookTimeout: 300_000,
    pool: 'forks',
    maxWorkers: 1,
    include: ['test/real/**/*.test.ts'],
  },
});
