// A real cluster's node reached through `kubectl debug node/NODE`: a pod on the node with the host's filesystem at
// /host and the host's network namespace (node debug pods are hostNetwork), which runs one script under
// `chroot /host /bin/sh`, so the host's own iptables-save, ip, conntrack and bpftool read the node. The host's shell
// by its path: a BusyBox image's chroot runs its own `sh` applet for a bare `sh`, which then runs its own `ip`
// applet (no `-j`) instead of the host's.
//
// The pod is not attached to (`--attach=false`): a script that ends before kubectl attaches loses its output
// (kubectl 1.20 then exits 0 with nothing, seen on the `local` cluster); its output is read from the pod's log once
// the pod has ended, and the pod, which would stay behind as Completed, is deleted. kubectl's default debug pod
// is not privileged: without CAP_NET_ADMIN, iptables-save, nft and conntrack are refused ("Permission denied (you
// must be root)") and the manifest says so; kubectl from 1.27 has `--profile=sysadmin` for a privileged pod.

export interface KubectlAccess {
  /** The kubectl to run (default kubectl on PATH). */
  kubectl?: string;
  kubeconfig?: string;
}

export interface KubectlDebugInput extends KubectlAccess {
  node: string;
  image: string;
  /** kubectl's debugging profile (`sysadmin`: a privileged pod; kubectl >= 1.27), else kubectl's default. */
  profile?: string;
  script: string;
}

const base = (i: KubectlAccess) => [i.kubectl ?? 'kubectl', ...(i.kubeconfig ? ['--kubeconfig', i.kubeconfig] : [])];

/** kubectl debug node/NODE --image=IMAGE --attach=false -- chroot /host /bin/sh -c SCRIPT */
export function kubectlDebugArgv(i: KubectlDebugInput): string[] {
  return [
    ...base(i),
    'debug',
    `node/${i.node}`,
    `--image=${i.image}`,
    ...(i.profile ? [`--profile=${i.profile}`] : []),
    '--attach=false',
    '--',
    'chroot',
    '/host',
    '/bin/sh',
    '-c',
    i.script,
  ];
}

/** The debug pod's name, from kubectl's "Creating debugging pod NAME with container ..." line (stdout or stderr). */
export function debugPodName(output: string): string | undefined {
  return /Creating debugging pod (\S+)/.exec(output)?.[1];
}

/** The pod's phase: Pending, Running, then Succeeded or Failed. */
export function podPhaseArgv(i: KubectlAccess, pod: string): string[] {
  return [...base(i), 'get', 'pod', pod, '-o', 'jsonpath={.status.phase}'];
}

/** What the script printed. */
export function podLogsArgv(i: KubectlAccess, pod: string): string[] {
  return [...base(i), 'logs', pod];
}

/** Deletes the debug pod (not waiting for it to go). */
export function deleteDebugPodArgv(i: KubectlAccess, pod: string): string[] {
  return [...base(i), 'delete', 'pod', pod, '--wait=false'];
}
