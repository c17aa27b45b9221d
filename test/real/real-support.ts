// What the real-cluster tests need: root and the one-time build; otherwise they are skipped, saying why
// (under CI=true a missing build is a failure: test:real builds it first).
import { findLocalBuild } from '../../src/providers/real/local/local-build.ts';

export function realSkipReason(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root';
  if (!findLocalBuild()) return 'no Kubernetes build (npm run build:kubernetes)';
  return undefined;
}
