// kubectl and helm pinned to the run's own kubeconfig file and context, so they can never act on
// whatever the user's current context happens to be. Every call passes the context guard first.
import type { ExecOptions, ExecResult } from '../../../contract/command.ts';
import { runCommand } from '../../../contract/command.ts';
import { assertContextAllowed, type ContextGuard } from './context-guard.ts';

export interface KubeAccess {
  kubeconfig: string;
  context: string;
  /**
   * A unix socket that carries the Kubernetes client's connections to the API server, whose address is only
   * inside the run's namespaces (the `local` cluster's fabric, a private Docker engine's network): a forwarder
   * there serves it.
   */
  socket?: string;
  /** The network namespace (a path) where the kubeconfig's server address is reachable: kubectl and helm run there. */
  netns?: string;
  /** The kubectl to run (default: kubectl on PATH). */
  kubectl?: string;
}

export class KubeCli {
  constructor(
    readonly access: KubeAccess,
    private readonly guard: ContextGuard,
  ) {}

  async kubectl(args: readonly string[], options?: ExecOptions): Promise<ExecResult> {
    assertContextAllowed(this.access.context, this.guard);
    const argv = ['kubectl', '--kubeconfig', this.access.kubeconfig, '--context', this.access.context, ...args];
    if (this.access.kubectl) argv[0] = this.access.kubectl;
    return runCommand(this.access.netns ? ['nsenter', `--net=${this.access.netns}`, ...argv] : argv, options);
  }

  async helm(args: readonly string[], options?: ExecOptions): Promise<ExecResult> {
    assertContextAllowed(this.access.context, this.guard);
    const argv = ['helm', ...args, '--kubeconfig', this.access.kubeconfig, '--kube-context', this.access.context];
    return runCommand(this.access.netns ? ['nsenter', `--net=${this.access.netns}`, ...argv] : argv, options);
  }
}
