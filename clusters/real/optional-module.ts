// The real-cluster providers need libraries a netns user never loads (~100 MB): they are optional
// dependencies. When one is absent, say so as an environment problem (exit 3) with the install line.
import { HarnessError } from '../../harness/model/errors.ts';

export const REAL_CLUSTER_PACKAGES = ['@kubernetes/client-node', '@testcontainers/k3s'] as const;

function missingPackage(e: unknown): string | undefined {
  const err = e as { code?: string; message?: string };
  if (err?.code !== 'ERR_MODULE_NOT_FOUND' && err?.code !== 'MODULE_NOT_FOUND') return undefined;
  return REAL_CLUSTER_PACKAGES.find((p) => err.message?.includes(`'${p}'`));
}

/** `load()`, or HarnessError ENVIRONMENT naming the missing optional package and how to install it. */
export async function importOptional<T>(what: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (e) {
    const pkg = missingPackage(e);
    if (!pkg) throw e;
    throw new HarnessError(
      'ENVIRONMENT',
      `${what} needs ${pkg}, which is not installed (an optional dependency, left out by --omit=optional or --no-optional)`,
      `npm install ${REAL_CLUSTER_PACKAGES.join(' ')}`,
      { cause: e },
    );
  }
}
