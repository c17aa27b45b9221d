// What the real-cluster tests need: root and the one-time builds; otherwise they are skipped, saying why
// (under CI=true a missing Kubernetes build is a failure: test:real builds it first; kind's build needs kind's
// source, which a fresh machine may not have, so without it the kind tests skip with the command to fix it).
import { findLocalBuild } from '../../src/providers/real/local/local-build.ts';
import { findKindBuild, KIND_BUILD_HINT } from '../../src/providers/real/containers/kind/kind-build.ts';

export function realSkipReason(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root';
  if (!findLocalBuild()) return 'no Kubernetes build (npm run build:kubernetes)';
  return undefined;
}

export function kindSkipReason(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root';
  if (!findKindBuild()) return `no kind build: ${KIND_BUILD_HINT}`;
  return undefined;
}
