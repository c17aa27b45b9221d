import { defineConfig } from 'vitest/config';

// `npm run test:real`: the `local` provider's real Kubernetes cluster and real kind on a Docker engine of its own
// (need root and the one-time builds, `npm run build:kubernetes` and `npm run build:kind`, which test:real runs
// first). Not part of `npm test`. One file at a time: each cluster takes ~0.7-1 GB and most of a core while it
// starts.
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
