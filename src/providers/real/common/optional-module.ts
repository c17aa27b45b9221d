// The real-cluster providers need libraries a netns user never loads (~100 MB): they are optional peer
// dependencies, installed only on request. When one is absent, say so as an environment problem (exit 3)
// with the install line.
import { createRequire } from 'node:module';
import { HarnessError } from '../../../model/errors.ts';

export const REAL_CLUSTER_PACKAGES = ['@kubernetes/client-node', '@testcontainers/k3s'] as const;

function missingPackage(e: unknown): string | undefined {
  const err = e as { code?: string; message?: string };
  if (err?.code !== 'ERR_MODULE_NOT_FOUND' && err?.code !== 'MODULE_NOT_FOUND') return undefined;
  return REAL_CLUSTER_PACKAGES.find((p) => err.message?.includes(`'${p}'`));
}

function absent(what: string, pkg: string, cause?: unknown): HarnessError {
  return new HarnessError(
    'ENVIRONMENT',
    `${what} needs ${pkg}, which is not installed (an optional peer dependency: npm installs it only on request)`,
    `npm install ${REAL_CLUSTER_PACKAGES.join(' ')}`,
    { cause },
  );
}

/**
 * HarnessError ENVIRONMENT unless every package in `packages` resolves. Resolution only, nothing is
 * loaded: a provider whose library is only imported deep in provisioning (k3s: testcontainers)
 * still fails before the run, with exit 3.
 */
export function requireInstalled(what: string, packages: readonly (typeof REAL_CLUSTER_PACKAGES)[number][]): void {
  const require = createRequire(import.meta.url);
  for (const pkg of packages) {
    try {
      require.resolve(pkg);
    } catch (e) {
      throw absent(what, pkg, e);
    }
  }
}

/** `load()`, or HarnessError ENVIRONMENT naming the missing optional package and how to install it. */
export async function importOptional<T>(what: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (e) {
    const pkg = missingPackage(e);
    if (!pkg) throw e;
    throw absent(what, pkg, e);
  }
}
