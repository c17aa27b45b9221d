// What the lab must never change in the root network namespace.
import { readdir } from 'node:fs/promises';
import { runCommand } from '../src/contract/command.ts';

const HOST_SYSCTLS = [
  'net.ipv4.ip_forward',
  'net.bridge.bridge-nf-call-iptables',
  'net.netfilter.nf_conntrack_tcp_be_liberal',
  'net.ipv6.conf.all.disable_ipv6',
];

export async function hostSnapshot(): Promise<Record<string, string>> {
  const out = async (argv: string[]) => (await runCommand(argv, { reject: false })).stdout;
  return {
    iptables: (await out(['iptables-save'])).replace(/^#.*$/gm, '').replace(/\[\d+:\d+\]/g, ''),
    routes: await out(['ip', 'route', 'show', 'table', 'all']),
    links: (await out(['ip', '-o', 'link'])).replace(/\s+link\/.*$/gm, ''),
    addresses: await out(['ip', '-o', 'addr']),
    sysctls: await out(['sysctl', ...HOST_SYSCTLS]),
  };
}

/** Namespaces of our runs that are still there. */
export async function labNamespaces(): Promise<string[]> {
  return (await readdir('/run/netns').catch(() => [] as string[])).filter((n) => /^nr-[0-9a-f]{6}-/.test(n));
}
