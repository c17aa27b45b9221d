// The addresses a scenario may fix itself instead of taking the lab's: a node's `address` on the nodes'
// network and a pod's `ip` in its node's podCIDR (a replay keeps the captured ones its rules name).
import type { ReferenceIssue } from './reference-check.ts';
import type { TopologySpec } from './scenario-schema.ts';
import { cidrContains, ipToInt, LAB_NODE_NETWORK } from './ipv4-ranges.ts';

/** The fabric's own address (the nodes' gateway) and the hosts' range (.100 + i) are the lab's. */
const GATEWAY = 1;
const HOSTS_FROM = 100;

export function placedAddressIssues(t: TopologySpec): ReferenceIssue[] {
  return [...nodeAddressIssues(t), ...podIpIssues(t)];
}

function nodeAddressIssues(t: TopologySpec): ReferenceIssue[] {
  const issues: ReferenceIssue[] = [];
  const seen = new Map<string, string>();
  t.nodes.forEach((n, i) => {
    const address = n.address ?? `172.18.0.${i + 2}`;
    const path = ['topology', 'nodes', i, 'address'];
    const last = ipToInt(address) & 0xff;
    if (n.address !== undefined && !cidrContains(LAB_NODE_NETWORK, `${address}/32`))
      issues.push({
        path,
        message: `outside the lab's node network ${LAB_NODE_NETWORK}`,
        received: address,
        expected: `an address in ${LAB_NODE_NETWORK}, or no address (172.18.0.${i + 2})`,
      });
    else if (n.address !== undefined && (last <= GATEWAY || last >= HOSTS_FROM))
      issues.push({
        path,
        message: `the lab's own: .1 is the nodes' gateway, .100 and above its hosts outside the cluster`,
        received: address,
        expected: `172.18.0.2 - 172.18.0.${HOSTS_FROM - 1}`,
      });
    const other = seen.get(address);
    if (other !== undefined)
      issues.push({
        path,
        message: `node ${other} has this address${n.address === undefined ? ' (this node has it by default: name another)' : ''}`,
        received: address,
        expected: 'an address of its own',
      });
    seen.set(address, n.name);
  });
  return issues;
}

function podIpIssues(t: TopologySpec): ReferenceIssue[] {
  const issues: ReferenceIssue[] = [];
  const seen = new Map<string, string>();
  for (const node of t.nodes) {
    const pods = t.pods.map((p, i) => ({ p, i })).filter(({ p }) => p.node === node.name);
    const placed = pods.filter(({ p }) => p.ip !== undefined);
    // host-local hands out the next free address: a pod without one could take a later pod's
    if (placed.length > 0 && placed.length < pods.length) {
      const { p, i } = pods.find(({ p }) => p.ip === undefined)!;
      issues.push({
        path: ['topology', 'pods', i, 'ip'],
        message: `pod ${p.name} has no ip while other pods of node ${node.name} have one: a node's pods name their addresses all or none`,
        expected: `an ip in ${node.podCIDR}`,
      });
    }
    const [base = '', len = '24'] = node.podCIDR.split('/');
    const size = 2 ** (32 - Number(len));
    for (const { p, i } of placed) {
      const path = ['topology', 'pods', i, 'ip'];
      const offset = ipToInt(p.ip!) - ipToInt(base);
      if (!cidrContains(node.podCIDR, `${p.ip}/32`))
        issues.push({
          path,
          message: `outside node ${node.name}'s podCIDR`,
          received: p.ip,
          expected: `an address in ${node.podCIDR}`,
        });
      else if (offset <= 1 || offset >= size - 1)
        issues.push({
          path,
          message: `the subnet's own (network, cni0's gateway .1 or broadcast), which host-local never hands out`,
          received: p.ip,
          expected: `an address from .2 of ${node.podCIDR}`,
        });
      const other = seen.get(p.ip!);
      if (other !== undefined)
        issues.push({
          path,
          message: `pod ${other} has this address`,
          received: p.ip,
          expected: 'an address of its own',
        });
      seen.set(p.ip!, p.name);
    }
  }
  return issues;
}
