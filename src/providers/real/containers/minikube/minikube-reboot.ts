// Rebooting a node of minikube's docker driver: `docker restart` of its container, then what `minikube start`
// does for a node it boots, short of re-running kubeadm. `minikube stop/start` would do it all, but its
// kubeadm addon phase writes kube-proxy's DaemonSet anew, dropping the hold affinity a reboot needs to start
// Cilium first. After the restart:
// - docker has written the container's /etc/hosts anew, without minikube's `control-plane.minikube.internal`
//   (the API server address in the kubelet's and kube-proxy's kubeconfigs): it is added back, with the control
//   plane container's address on the cluster's network now;
// - minikube never enables the kubelet's unit (it would start before that alias is there), so it is started;
// - the control plane's API server is published on a new host port: `minikube update-context` writes it into
//   the run's kubeconfig (kubeconfig-following-api.ts follows it).
import { HarnessError } from '../../../../model/errors.ts';
import { runCommand } from '../../../../contract/command.ts';
import type { RunContext } from '../../../../contract/provider.ts';
import { assertOwnedName } from '../../common/context-guard.ts';

export const CONTROL_PLANE_ALIAS = 'control-plane.minikube.internal';
const BOOT_TIMEOUT_MS = 120_000;

export interface MinikubeRebootInput {
  profile: string;
  /** The run's kubeconfig, which minikube writes its context into. */
  kubeconfig: string;
  run: RunContext;
}

/** The argv that puts `ip control-plane.minikube.internal` in /etc/hosts in place of any earlier line for it. */
export function controlPlaneAliasArgv(ip: string): string[] {
  // /etc/hosts is docker's bind mount: written over in place (cp), never replaced (mv)
  const script = `grep -v "\t${CONTROL_PLANE_ALIAS}$" /etc/hosts > /tmp/hosts.netrepro; printf '%s\\t${CONTROL_PLANE_ALIAS}\\n' "$1" >> /tmp/hosts.netrepro; cp /tmp/hosts.netrepro /etc/hosts`;
  return ['sh', '-c', script, 'sh', ip];
}

export function restartMinikubeNode({ profile, kubeconfig, run }: MinikubeRebootInput) {
  const opts = { timeoutMs: 60_000, signal: run.signal };
  return async (node: string): Promise<void> => {
    assertOwnedName(node, run.prefix, 'node container');
    await runCommand(['docker', 'restart', node], { timeoutMs: 180_000, signal: run.signal });
    await waitBooted(node, run.signal);
    const inspect = await runCommand(
      ['docker', 'inspect', '-f', `{{(index .NetworkSettings.Networks "${profile}").IPAddress}}`, profile],
      opts,
    );
    const ip = inspect.stdout.trim();
    if (!/^\d+\.\d+\.\d+\.\d+$/.test(ip))
      throw new HarnessError('LAB_FAILED', `minikube control plane ${profile}: no address on its network (${ip})`);
    await runCommand(['docker', 'exec', node, ...controlPlaneAliasArgv(ip)], opts);
    await runCommand(['docker', 'exec', node, 'systemctl', 'start', 'kubelet'], opts);
    if (node === profile)
      await runCommand(['minikube', 'update-context', '-p', profile], { ...opts, env: { KUBECONFIG: kubeconfig } });
  };
}

/** systemd in the node container has finished booting (`degraded` counts: some unit of the image failed). */
async function waitBooted(node: string, signal: AbortSignal): Promise<void> {
  const deadline = Date.now() + BOOT_TIMEOUT_MS;
  let state = '';
  for (;;) {
    const got = await runCommand(['docker', 'exec', node, 'systemctl', 'is-system-running', '--wait'], {
      timeoutMs: BOOT_TIMEOUT_MS,
      reject: false,
      signal,
    });
    state = got.stdout.trim() || got.stderr.trim();
    if (state === 'running' || state === 'degraded') return;
    if (Date.now() > deadline)
      throw new HarnessError('LAB_FAILED', `node ${node} did not finish booting after its restart (systemd: ${state})`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}
