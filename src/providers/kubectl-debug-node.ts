// A real cluster's node reached through `kubectl debug node/NODE`: a pod on the node with the host's filesystem at
// /host and the host's network namespace (node debug pods are hostNetwork), which runs one script under
// `chroot /host`, so the host's own iptables-save, ip, conntrack and bpftool read the node. `-i` without `-t`: a TTY
// would turn the output's newlines into CRLF and mix stderr into it. The debug pod stays behind as Completed until
// deleted: capture deletes it by the name kubectl printed.

export interface KubectlDebugInput {
  /** The kubectl to run (default kubectl on PATH). */
  kubectl?: string;
  kubeconfig?: string;
  node: string;
  image: string;
  script: string;
}

const base = (i: Pick<KubectlDebugInput, 'kubectl' | 'kubeconfig'>) => [
  i.kubectl ?? 'kubectl',
  ...(i.kubeconfig ? ['--kubeconfig', i.kubeconfig] : []),
];

/** kubectl debug node/NODE --image=IMAGE -i -- chroot /host sh -c SCRIPT */
export function kubectlDebugArgv(i: KubectlDebugInput): string[] {
  return [
    ...base(i),
    'debug',
    `node/${i.node}`,
    `--image=${i.image}`,
    '-i',
    '--',
    'chroot',
    '/host',
    'sh',
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
