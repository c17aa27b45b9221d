// A real cluster's node reached through `kubectl debug node/NODE`: a pod on the node with the host's filesystem at
// /host and the host's network namespace (node debug pods are hostNetwork), which runs one script under
// `chroot /host`, so the host's own iptables-save, ip, conntrack and bpftool read the node. `-i` without `-t`: a TTY
// would turn the output's newlines into CRLF and mix stderr into it. The debug pod stays behind as Completed until
// deleted: capture deletes it by the name kubectl printed. kubectl's default debug pod is not privileged: without
// CAP_NET_ADMIN, iptables-save, nft and conntrack are refused ("Permission denied (you must be root)") and said so
// in the manifest; kubectl from 1.27 has `--profile=sysadmin` for a privileged pod.

export interface KubectlDebugInput {
  /** The kubectl to run (default kubectl on PATH). */
  kubectl?: string;
  kubeconfig?: string;
  node: string;
  image: string;
  /** kubectl's debugging profile (`sysadmin`: a privileged pod; kubectl >= 1.27), else kubectl's default. */
  profile?: string;
  script: string;
}

const base = (i: Pick<KubectlDebugInput, 'kubectl' | 'kubeconfig'>) => [
  i.kubectl ?? 'kubectl',
  ...(i.kubeconfig ? ['--kubeconfig', i.kubeconfig] : []),
];

/**
 * kubectl debug node/NODE --image=IMAGE -i -- chroot /host /bin/sh -c SCRIPT. The host's shell by its path: a
 * BusyBox image's chroot runs its own `sh` applet for a bare `sh`, which then runs its own `ip` applet (no `-j`)
 * instead of the host's.
 */
export function kubectlDebugArgv(i: KubectlDebugInput): string[] {
  return [
    ...base(i),
    'debug',
    `node/${i.node}`,
    `--image=${i.image}`,
    ...(i.profile ? [`--profile=${i.profile}`] : []),
    '-i',
    '--',
    'chroot',
    '/host',
    '/bin/sh',
    '-c',
    i.script,
  ];
}

/** The debug pod's name, from kubectl's "Creating debugging pod NAME with container ..." line. */
export function debugPodName(stderr: string): string | undefined {
  return /Creating debugging pod (\S+)/.exec(stderr)?.[1];
}

/** Deletes the debug pod (not waiting for it to go). */
export function deleteDebugPodArgv(i: Pick<KubectlDebugInput, 'kubectl' | 'kubeconfig'>, pod: string): string[] {
  return [...base(i), 'delete', 'pod', pod, '--wait=false'];
}
