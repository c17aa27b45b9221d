// The node components that own iptables rules: kube-proxy and the Cilium agent. Each one, when it
// starts, drops its old jumps from the built-in chains and prepends fresh ones, so whichever
// started last sits first in FORWARD: the kube-proxy/Cilium start-order race of incident 01.
import type { Target } from '../provider.ts';

/** The rules Cilium (legacy host routing) installs in filter; its jump goes first in FORWARD. */
export const CILIUM_RULES = [
  '*filter',
  ':CILIUM_FORWARD - [0:0]',
  '-A CILIUM_FORWARD -o cilium_host -m comment --comment "cilium: any->cluster on cilium_host forward accept" -j ACCEPT',
  '-A CILIUM_FORWARD -i cilium_host -m comment --comment "cilium: cluster->any on cilium_host forward accept (nodeport)" -j ACCEPT',
  '-A CILIUM_FORWARD -i lxc+ -m comment --comment "cilium: cluster->any on lxc+ forward accept" -j ACCEPT',
  '-A CILIUM_FORWARD -i cilium_net -m comment --comment "cilium: cluster->any on cilium_net forward accept (nodeport)" -j ACCEPT',
  '-I FORWARD 1 -m comment --comment "cilium-feeder: CILIUM_FORWARD" -j CILIUM_FORWARD',
  'COMMIT',
  '',
].join('\n');

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

/**
 * (Re)starts a component on a node: its old jumps go, its rules and fresh jumps are written in one
 * restore. On its `first` start (the lab's provisioning) it has no jumps yet: only the restore runs.
 */
export async function startComponent(node: Target, owner: keyof typeof OWN_JUMPS, rules: string, { first = false } = {}): Promise<void> {
  if (!first) {
    const save = await node.exec(['iptables-save']);
    await node.exec(['iptables-restore', '--noflush'], { input: removeJumps(save.stdout, owner) });
  }
  await node.exec(['iptables-restore', '--noflush'], { input: rules });
}
