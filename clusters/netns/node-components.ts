// The node components that own iptables rules: kube-proxy and the Cilium agent. Each one, when it
// starts, drops its old jumps from the built-in chains and prepends fresh ones, so whichever
// started last sits first in FORWARD: the kube-proxy/Cilium start-order race of incident 01.
// Cilium's rules by version: cilium-forward-rules.ts.
import type { Target } from '../provider.ts';

const OWN_JUMPS = { 'kube-proxy': / -j KUBE-/, cilium: / -j CILIUM_/ } as const;

/** An iptables-restore payload deleting every rule of a built-in chain that jumps into `owner`'s chains. */
export function removeJumps(save: string, owner: keyof typeof OWN_JUMPS): string {
  const out: string[] = [];
  for (const line of save.split('\n')) {
    if (line.startsWith('*') || line === 'COMMIT') out.push(line);
    else if (/^-A (PREROUTING|INPUT|FORWARD|OUTPUT|POSTROUTING) /.test(line) && OWN_JUMPS[owner].test(line)) out.push(line.replace(/^-A /, '-D '));
  }
  return out.join('\n') + '\n';
}

/** (Re)starts a component on a node: its old jumps go, its rules and fresh jumps are written in one restore. */
export async function startComponent(node: Target, owner: keyof typeof OWN_JUMPS, rules: string): Promise<void> {
  const save = await node.exec(['iptables-save']);
  await node.exec(['iptables-restore', '--noflush'], { input: removeJumps(save.stdout, owner) });
  await node.exec(['iptables-restore', '--noflush'], { input: rules });
}
