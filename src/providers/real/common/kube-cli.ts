// kubectl and helm pinned to the run's own kubeconfig file and context, so they can never act on
// whatever the user's current context happens to be. Every call passes the context guard first.
import type { ExecOptions, ExecResult } from '../../../contract/command.ts';
import { runCommand } from '../../../contract/command.ts';
import { assertContextAllowed, type ContextGuard } from './context-guard.ts';

export interface KubeAccess {
  kubeconfig: string;
  context: string;
  /**
   * A unix socket that carries the connection to the API server (the `local` provider's server listens
   * only inside the run's namespaces; a forwarder there serves this socket). kubectl is not used then.
   */
  socket?: string;
}

export class KubeCli {
  constructor(
    readonly access: KubeAccess,
    private readonly guard: ContextGuard,
  ) {}

  async kubectl(args: readonly string[], options?: ExecOptions): Promise<ExecResult> {
    assertContextAllowed(this.access.context, this.guard);
    return runCommand(
      ['kubectl', '--kubeconfig', this.access.kubeconfig, '--context', this.access.context, ...args],
      options,
    );
  }

  async helm(args: readonly string[], options?: ExecOptions): Promise<ExecResult> {
    assertContextAllowed(this.access.context, this.guard);
    return runCommand(
      ['helm', ...args, '--kubeconfig', this.access.kubeconfig, '--kube-context', this.access.context],
      options,
    );
  }
}
