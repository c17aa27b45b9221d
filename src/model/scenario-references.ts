// Checks a schema-valid scenario for things a schema cannot see: references between sections,
// duplicate names, addresses that do not fit their subnets.
import { LOCALHOST, LOOPBACK_ADDRESS } from './localhost.ts';
import { checkPhases } from './phase-references.ts';
import { placedAddressIssues } from './placed-addresses.ts';
import { probeDestination, probeKindOf } from './probes/registry.ts';
import { duplicateIssues, ReferenceCheck, type ReferenceIssue } from './reference-check.ts';
import type { ProbeSpec, Scenario, TopologySpec } from './scenario-schema.ts';
import { cidrContains, LAB_NODE_NETWORK, overlaps } from './ipv4-ranges.ts';

export type { ReferenceIssue } from './reference-check.ts';

export { cidrContains, ipToInt, LAB_NODE_NETWORK, overlaps } from './ipv4-ranges.ts';

/** Every issue in the order found: unique names, the topology's parts, the probes, then each phase. */
export function checkReferences(s: Scenario): ReferenceIssue[] {
  const check = new ReferenceCheck(s);
  const t = s.topology;
  check.add(...duplicateNameIssues(s), ...hostPortClashIssues(t));
  for (const [i, p] of t.pods.entries()) checkPod(check, p, i);
  for (const [i, n] of t.nodes.entries()) checkNode(check, n, i);
  check.add(...podCIDROverlapIssues(t), ...clusterCIDRIssues(t), ...placedAddressIssues(t));
  for (const [i, v] of t.services.entries()) checkService(check, v, i);
  for (const [i, p] of s.probes.entries()) checkProbe(check, p, i);
  checkPhases(check);
  return check.issues;
}

function duplicateNameIssues(s: Scenario): ReferenceIssue[] {
  const t = s.topology;
  return [
    ...duplicateIssues(
      t.nodes.map((n) => n.name),
      ['topology', 'nodes'],
      'name',
    ),
    ...duplicateIssues(
      t.pods.map((p) => p.name),
      ['topology', 'pods'],
      'name',
    ),
    ...duplicateIssues(
      t.services.map((v) => v.name),
      ['topology', 'services'],
      'name',
    ),
    ...duplicateIssues(
      [...t.nodes, ...t.pods, ...t.hosts].map((x) => x.name),
      ['topology'],
      'name (nodes, pods and hosts share one namespace of names)',
    ),
    ...duplicateIssues(
      s.probes.map((p) => p.id),
      ['probes'],
      'id',
    ),
    ...duplicateIssues(
      s.fixes.map((f) => f.name),
      ['fixes'],
      'name',
    ),
    ...duplicateIssues(
      t.services.map((v) => v.clusterIP).filter((ip) => ip !== 'None'),
      ['topology', 'services'],
      'clusterIP',
    ),
  ];
}

/**
 * The scheduler places no two pods on a node whose hostPorts clash (its NodePorts filter, HostPortInfo): the same
 * port and protocol on the same address, where no hostIP is every address of the node.
 */
function hostPortClashIssues(t: TopologySpec): ReferenceIssue[] {
  const issues: ReferenceIssue[] = [];
  const taken: { node: string; port: number; protocol: string; hostIP?: string; pod: string }[] = [];
  for (const [i, p] of t.pods.entries()) {
    for (const [j, h] of (p.hostPorts ?? []).entries()) {
      const holder = taken.find(
        (x) =>
          x.node === p.node &&
          x.port === h.hostPort &&
          x.protocol === h.protocol &&
          (x.hostIP === undefined || h.hostIP === undefined || x.hostIP === h.hostIP),
      );
      if (holder)
        issues.push({
          path: ['topology', 'pods', i, 'hostPorts', j, 'hostPort'],
          message: `pod ${holder.pod} already holds ${boundPort(holder)} on node ${p.node}${holder.hostIP === undefined && h.hostIP !== undefined ? ' (on every address of the node: it has no hostIP)' : ''}`,
          received: String(h.hostPort),
          expected: 'a hostPort and protocol free on the node, or a hostIP no other pod binds it to',
        });
      else taken.push({ node: p.node, port: h.hostPort, protocol: h.protocol, hostIP: h.hostIP, pod: p.name });
    }
  }
  return issues;
}

/** `8080/TCP`, or `8080/TCP at hostIP 127.0.0.1` bound to one address. */
const boundPort = (h: { port: number; protocol: string; hostIP?: string }) =>
  `${h.port}/${h.protocol}${h.hostIP === undefined ? '' : ` at hostIP ${h.hostIP}`}`;

/** A hostIP is an address of the pod's own node: node/NAME of that node, or its loopback. */
function hostIPIssues(p: TopologySpec['pods'][number], i: number): ReferenceIssue[] {
  return (p.hostPorts ?? []).flatMap((h, j): ReferenceIssue[] => {
    if (h.hostIP === undefined || h.hostIP === `node/${p.node}` || h.hostIP === LOOPBACK_ADDRESS) return [];
    const path = ['topology', 'pods', i, 'hostPorts', j, 'hostIP'];
    const expected = `node/${p.node} (its address) or ${LOOPBACK_ADDRESS} (its loopback)`;
    if (h.hostIP.startsWith('node/'))
      return [
        {
          path,
          message: `${h.hostIP.slice('node/'.length)} is not pod ${p.name}'s node (${p.node}): a hostPort is bound to an address of the pod's own node`,
          received: h.hostIP,
          expected,
        },
      ];
    return [
      {
        path,
        message: `not an address of node ${p.node}: a node's address is the provider's, so it is written node/${p.node}`,
        received: h.hostIP,
        expected,
      },
    ];
  });
}

function checkPod(check: ReferenceCheck, p: TopologySpec['pods'][number], i: number): void {
  const t = check.scenario.topology;
  if (p.hostPorts && t.cni === 'cilium')
    check.add({
      path: ['topology', 'pods', i, 'hostPorts'],
      message: "hostPorts are written by the bridge CNI chain's portmap plugin, which the cilium shape has not",
      received: t.cni,
      expected: 'topology.cni: bridge | flannel',
    });
  if (!check.names.node.has(p.node))
    check.add({
      path: ['topology', 'pods', i, 'node'],
      message: 'unknown node',
      received: p.node,
      expected: `one of: ${check.known('node')}`,
    });
  check.add(...hostIPIssues(p, i));
}

function checkNode(check: ReferenceCheck, n: TopologySpec['nodes'][number], i: number): void {
  const t = check.scenario.topology;
  if (n.defaultRoute.startsWith('host/') && !check.names.host.has(n.defaultRoute.slice(5)))
    check.add({
      path: ['topology', 'nodes', i, 'defaultRoute'],
      message: 'unknown host',
      received: n.defaultRoute,
      expected: `one of: ${check.known('host')}`,
    });
  if (n.cniChain && t.cni === 'cilium')
    check.add({
      path: ['topology', 'nodes', i, 'cniChain'],
      message: "the cilium shape's pods are not wired by the bridge CNI chain",
      received: n.cniChain.join(', '),
      expected: 'topology.cni: bridge | flannel, or no cniChain',
    });
  check.add(...podCIDRIssues(t, n, i));
}

/** The node's podCIDR holds its pods and lies inside the clusterCIDR. */
function podCIDRIssues(t: TopologySpec, n: TopologySpec['nodes'][number], i: number): ReferenceIssue[] {
  const issues: ReferenceIssue[] = [];
  const pods = t.pods.filter((p) => p.node === n.name).length;
  const size = 2 ** (32 - Number(n.podCIDR.split('/')[1]));
  if (pods > size - 3)
    issues.push({
      path: ['topology', 'nodes', i, 'podCIDR'],
      message: `too small for ${pods} pods`,
      received: n.podCIDR,
    });
  if (!cidrContains(t.clusterCIDR, n.podCIDR))
    issues.push({
      path: ['topology', 'nodes', i, 'podCIDR'],
      message: 'not inside clusterCIDR',
      received: n.podCIDR,
      expected: `a subnet of ${t.clusterCIDR}`,
    });
  return issues;
}

function podCIDROverlapIssues(t: TopologySpec): ReferenceIssue[] {
  const issues: ReferenceIssue[] = [];
  t.nodes.forEach((n, i) => {
    const other = t.nodes.findIndex((m, j) => j < i && overlaps(m.podCIDR, n.podCIDR));
    if (other >= 0)
      issues.push({
        path: ['topology', 'nodes', i, 'podCIDR'],
        message: `overlaps node ${t.nodes[other]!.name}'s podCIDR`,
        received: n.podCIDR,
        expected: 'a pod subnet of its own',
      });
  });
  return issues;
}

function clusterCIDRIssues(t: TopologySpec): ReferenceIssue[] {
  if (!overlaps(t.clusterCIDR, LAB_NODE_NETWORK)) return [];
  return [
    {
      path: ['topology', 'clusterCIDR'],
      message: `overlaps the lab's node network ${LAB_NODE_NETWORK}`,
      received: t.clusterCIDR,
      expected: `a range outside ${LAB_NODE_NETWORK}`,
    },
  ];
}

function checkService(check: ReferenceCheck, v: TopologySpec['services'][number], i: number): void {
  const t = check.scenario.topology;
  const headless = v.clusterIP === 'None';
  if (!headless && cidrContains(LAB_NODE_NETWORK, `${v.clusterIP}/32`)) {
    check.add({
      path: ['topology', 'services', i, 'clusterIP'],
      message: `inside the lab's node network ${LAB_NODE_NETWORK}`,
      received: v.clusterIP,
      expected: 'a service IP such as 10.96.0.x',
    });
  }
  v.endpoints.forEach(({ pod }, j) => {
    if (!check.names.pod.has(pod))
      check.add({
        path: ['topology', 'services', i, 'endpoints', j],
        message: 'unknown pod',
        received: pod,
        expected: `one of: ${check.known('pod')}`,
      });
  });
  if (!headless && cidrContains(t.clusterCIDR, `${v.clusterIP}/32`))
    check.add({
      path: ['topology', 'services', i, 'clusterIP'],
      message: 'a ClusterIP must not be inside the pod network',
      received: v.clusterIP,
      expected: `outside ${t.clusterCIDR}`,
    });
}

function checkProbe(check: ReferenceCheck, p: ProbeSpec, i: number): void {
  if (p.from.includes('/')) check.checkRef(p.from, ['probes', i, 'from']);
  else if (!check.names.pod.has(p.from))
    check.add({
      path: ['probes', i, 'from'],
      message: 'unknown pod',
      received: p.from,
      expected: `one of: ${check.known('pod')}`,
    });
  // parallel runs of a fixed source port would bind one port twice: the second run fails (EADDRINUSE)
  const fixedPort = p.dns?.sourcePort !== undefined ? 'dns' : p.udp?.sourcePort !== undefined ? 'udp' : undefined;
  if (fixedPort && p.parallel > 1) {
    check.add({
      path: ['probes', i, 'parallel'],
      message: 'parallel runs cannot share one fixed source port: each run binds it (Address already in use)',
      received: String(p.parallel),
      expected: `parallel: 1 with ${fixedPort}.sourcePort, or no sourcePort`,
    });
  }
  const { ref, field } = probeDestination(p);
  const path = ['probes', i, probeKindOf(p)[0], field];
  // localhost is the client's own: there is always one
  if (ref !== LOCALHOST) check.checkRef(ref, path);
  const headless = check.scenario.topology.services.find((v) => `svc/${v.name}` === ref && v.clusterIP === 'None');
  if (headless)
    check.add({
      path,
      message: `${ref} is headless (clusterIP: None): it has no address to send to`,
      received: ref,
      expected: `one of its pods, or a dns probe of ${headless.name}.${headless.namespace}.svc.cluster.local`,
    });
}
