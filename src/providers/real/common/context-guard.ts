// Fault injection rewrites node kernels (sysctls, iptables). So every kube context and node
// container a real provider touches must be one this run created, or one the user allowed by name.
import { HarnessError } from '../../../model/errors.ts';

export interface ContextGuard {
  /** The context this run created. */
  readonly created: string;
  readonly allowContexts: readonly string[];
}

export function assertContextAllowed(context: string, guard: ContextGuard): void {
  if (context === guard.created || guard.allowContexts.includes(context)) return;
  throw new HarnessError(
    'ENVIRONMENT',
    `refusing to touch kube context "${context}": this run created "${guard.created}", and fault injection changes node kernels`,
    `if "${context}" is a throwaway cluster you own, allow it by name: NETREPRO_ALLOW_CONTEXT=${context} (comma-separated list), or the allowContexts provider option`,
  );
}

/** Node containers/profiles must carry the run prefix before we exec into them. */
export function assertOwnedName(name: string, prefix: string, what: string): void {
  if (!name.startsWith(prefix)) {
    throw new HarnessError(
      'ENVIRONMENT',
      `refusing to touch ${what} "${name}": it does not carry this run's prefix ${prefix}`,
      'only clusters created by this run are modified',
    );
  }
}
