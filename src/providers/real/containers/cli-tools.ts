// The runtime CLIs the real providers drive (docker, kind, minikube, kubectl, helm): finding them,
// checking the container engine is reachable, and saying exactly what is missing and how to get it.
import { access, constants } from 'node:fs/promises';
import { HarnessError } from '../../../model/errors.ts';
import type { Availability } from '../../../contract/provider.ts';
import { runCommand } from '../../../contract/command.ts';
import { PINNED } from '../common/real-options.ts';

export type ToolName = 'docker' | 'kind' | 'minikube' | 'kubectl' | 'helm';

const INSTALL: Record<ToolName, string> = {
  docker: 'install Docker Engine (https://docs.docker.com/engine/install/) and start it',
  kind: `install kind ${PINNED.kindVersion}: https://kind.sigs.k8s.io/docs/user/quick-start/#installation`,
  minikube: `install minikube v${PINNED.minikubeVersion}: https://minikube.sigs.k8s.io/docs/start/`,
  kubectl: `install kubectl ${PINNED.k8sVersion.replace(/\.\d+$/, '')}: https://kubernetes.io/docs/tasks/tools/#kubectl`,
  helm: `install helm ${PINNED.helmVersion}: https://helm.sh/docs/intro/install/`,
};

export async function onPath(command: string): Promise<boolean> {
  for (const dir of (process.env.PATH ?? '').split(':').filter(Boolean)) {
    try {
      await access(`${dir}/${command}`, constants.X_OK);
      return true;
    } catch {}
  }
  return false;
}

/** Everything missing at once (not the first), each with how to install it. */
export async function detectTools(provider: string, tools: readonly ToolName[]): Promise<Availability> {
  const missing: string[] = [];
  const hints: string[] = [];
  for (const tool of tools) {
    if (!(await onPath(tool))) {
      missing.push(`${tool} is not on PATH`);
      hints.push(INSTALL[tool]);
    } else if (tool === 'docker') {
      // the CLI alone is not enough: kind, minikube's docker driver and testcontainers need the daemon
      const info = await runCommand(['docker', 'info', '--format', '{{.ServerVersion}}'], {
        reject: false,
        timeoutMs: 15_000,
      }).catch(() => undefined);
      if (info?.exitCode !== 0) {
        const why = (info?.stderr ?? '').trim().split('\n').filter(Boolean).pop() ?? 'no answer';
        missing.push(`the Docker daemon is not reachable (\`docker info\`: ${why})`);
        hints.push('start Docker (e.g. `sudo systemctl start docker`) or point DOCKER_HOST at a running engine');
      }
    }
  }
  if (missing.length === 0) return { ok: true };
  return { ok: false, reason: `${provider} needs: ${missing.join('; ')}`, hint: hints.join('; ') };
}

/** helm is only needed by the cilium shape, so its absence is reported when a cilium lab starts. */
export async function requireHelm(provider: string): Promise<void> {
  if (!(await onPath('helm')))
    throw new HarnessError(
      'ENVIRONMENT',
      `${provider}: the cilium shape needs helm, which is not on PATH`,
      INSTALL.helm,
    );
}
