// What the lab must never change in the root network namespace.
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { runCommand } from '../src/contract/command.ts';

const HOST_SYSCTLS = [
  'net.ipv4.ip_forward',
  'net.bridge.bridge-nf-call-iptables',
  'net.netfilter.nf_conntrack_tcp_be_liberal',
  'net.ipv6.conf.all.disable_ipv6',
];

/** Kernel-wide: no namespace has its own. kubelet sets these in a privileged node container unless kept from it. */
const KERNEL_SYSCTLS = ['vm.overcommit_memory', 'vm.panic_on_oom', 'kernel.panic', 'kernel.panic_on_oops'];

/**
 * The host's mount points, but those in the runs' own places (namespace files, state directories), which runs
 * sharing the machine add and remove while a test looks; what a run leaves there is checked by its prefix.
 */
async function mountPoints(): Promise<string> {
  const info = await readFile('/proc/self/mountinfo', 'utf8');
  return info
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((m) => m && !/^\/(run\/netns|run\/netrepro|var\/tmp\/netrepro-[a-z]+)\//.test(m))
    .sort()
    .join('\n');
}

export async function hostSnapshot(): Promise<Record<string, string>> {
  const out = async (argv: string[]) => (await runCommand(argv, { reject: false })).stdout;
  return {
    iptables: (await out(['iptables-save'])).replace(/^#.*$/gm, '').replace(/\[\d+:\d+\]/g, ''),
    routes: await out(['ip', 'route', 'show', 'table', 'all']),
    links: (await out(['ip', '-o', 'link'])).replace(/\s+link\/.*$/gm, ''),
    addresses: await out(['ip', '-o', 'addr']),
    sysctls: await out(['sysctl', ...HOST_SYSCTLS]),
    kernel: await out(['sysctl', ...KERNEL_SYSCTLS]),
    mounts: await mountPoints(),
    // Docker creates a bind mount's missing source: kind mounts /lib/modules into every node
    libModules: existsSync('/lib/modules') ? 'present' : 'absent',
  };
}

/** Namespaces of our runs that are still there. */
export async function labNamespaces(): Promise<string[]> {
  return (await readdir('/run/netns').catch(() => [] as string[])).filter((n) => /^nr-[0-9a-f]{6}-/.test(n));
}
