// The `cni-chain` step in the netns lab: the node's CNI network config list changes (the lab's copy of the
// topology, read by every sandbox made from now on), then each named pod's sandbox is made again through it.
// Read back: the node's NAT table holds portmap's DNAT to each recreated pod's new address for each of its
// hostPorts (on its hostIP) exactly when the new chain has portmap, or the step fails.
import { HarnessError } from '../../model/errors.ts';
import type { LabAction } from '../../model/lab-action.ts';
import { hostIPAddress } from '../../dataplane/port-mappings.ts';
import type { NetnsLab } from './netns-lab.ts';

type CniChainChange = Extract<LabAction, { kind: 'cni-chain' }>;

export async function changeCniChain(lab: NetnsLab, action: CniChainChange): Promise<void> {
  const pods = action.recreate.map((name) => {
    const pod = lab.topology.pods.find((p) => p.name === name);
    if (pod?.node !== action.node)
      throw new HarnessError('STEP_FAILED', `cni-chain: pod ${name} does not run on node ${action.node}`);
    const backs = lab.topology.services.find((s) => s.endpoints.some((e) => e.pod === name));
    if (backs)
      throw new HarnessError(
        'STEP_FAILED',
        `cni-chain: pod ${name} backs svc/${backs.name}; its new address would change the EndpointSlice, which this step does not model`,
      );
    return pod;
  });
  const before = new Map(pods.map((pod) => [pod.name, lab.address(`pod/${pod.name}`)]));
  lab.replaceCniChain(action.node, action.plugins);
  for (const pod of pods) await lab.sandboxes.recreate(pod);
  const nat = (await lab.node(action.node).exec(['iptables-save', '-t', 'nat'])).stdout.split('\n');
  const mapped = action.plugins.includes('portmap');
  for (const pod of pods) {
    const ip = lab.address(`pod/${pod.name}`);
    for (const h of pod.hostPorts ?? []) {
      const proto = h.protocol.toLowerCase();
      const port = `-p ${proto} -m ${proto} --dport ${h.hostPort} -j DNAT --to-destination `;
      // another pod may hold the same port on another hostIP: only the DNATs to this pod's addresses count
      const dnat = nat.filter(
        (line) =>
          line.startsWith('-A CNI-DN-') &&
          line.includes(port) &&
          [ip, before.get(pod.name)].some((to) => line.endsWith(`${port}${to}:${h.containerPort}`)),
      );
      const bound = h.hostIP === undefined ? '' : `-d ${hostIPAddress(h.hostIP, (ref) => lab.address(ref))}/32 `;
      // with portmap: the DNAT to the new address, on its hostIP; without: none at all (the DEL took the old one out)
      const held = mapped
        ? dnat.length === 1 && dnat[0]!.endsWith(`${port}${ip}:${h.containerPort}`) && dnat[0]!.includes(bound)
        : dnat.length === 0;
      if (!held)
        throw new HarnessError(
          'STEP_FAILED',
          `cni-chain: after recreating pod ${pod.name} with [${action.plugins.join(', ')}], node ${action.node}'s nat table should hold ${mapped ? `portmap's DNAT of ${bound}${h.hostPort}/${h.protocol} to ${ip}:${h.containerPort}` : `no DNAT of ${h.hostPort}/${h.protocol} to pod ${pod.name}`}; it holds: ${dnat.join(' | ') || 'none'}`,
        );
    }
  }
}
