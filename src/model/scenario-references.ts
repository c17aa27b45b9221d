// Checks a schema-valid scenario for things a schema cannot see: references between sections,
// duplicate names, addresses that do not fit their subnets.
import type { Scenario } from './scenario-schema.ts';
import { stepKindOf } from './steps/registry.ts';
import { probeDestination, probeKindOf } from './probes/registry.ts';

/** The netns lab's node network (inside its fabric namespace): no scenario address may fall in it. */
export const LAB_NODE_NETWORK = '172.18.0.0/24';

export interface ReferenceIssue {
  path: (string | number)[];
  message: string;
  received?: string;
  expected?: string;
}

export function checkReferences(s: Scenario): ReferenceIssue[] {
  const issues: ReferenceIssue[] = [];
  const t = s.topology;
  const names = {
    node: new Set(t.nodes.map((n) => n.name)),
    pod: new Set(t.pods.map((p) => p.name)),
    svc: new Set(t.services.map((v) => v.name)),
    host: new Set(t.hosts.map((h) => h.name)),
  };
  const probeIds = new Set(s.probes.map((p) => p.id));
  const known = (kind: keyof typeof names) => [...names[kind]].join(', ') || 'none';

  duplicates(
    t.nodes.map((n) => n.name),
    ['topology', 'nodes'],
    'name',
    issues,
  );
  duplicates(
    t.pods.map((p) => p.name),
    ['topology', 'pods'],
    'name',
    issues,
  );
  duplicates(
    t.services.map((v) => v.name),
    ['topology', 'services'],
    'name',
    issues,
  );
  duplicates(
    [...t.nodes, ...t.pods, ...t.hosts].map((x) => x.name),
    ['topology'],
    'name (nodes, pods and hosts share one namespace of names)',
    issues,
  );
  duplicates(
    s.probes.map((p) => p.id),
    ['probes'],
    'id',
    issues,
  );
  duplicates(
    s.fixes.map((f) => f.name),
    ['fixes'],
    'name',
    issues,
  );
  duplicates(
    t.services.map((v) => v.clusterIP),
    ['topology', 'services'],
    'clusterIP',
    issues,
  );

  // the scheduler places no two pods with one hostPort and protocol on a node
  const hostPortsTaken = new Map<string, string>();
  for (const [i, p] of t.pods.entries()) {
    for (const [j, h] of (p.hostPorts ?? []).entries()) {
      const key = `${p.node} ${h.hostPort}/${h.protocol}`;
      const holder = hostPortsTaken.get(key);
      if (holder)
        issues.push({
          path: ['topology', 'pods', i, 'hostPorts', j, 'hostPort'],
          message: `pod ${holder} already holds ${h.hostPort}/${h.protocol} on node ${p.node}`,
          received: String(h.hostPort),
          expected: 'a hostPort and protocol free on the node',
        });
      else hostPortsTaken.set(key, p.name);
    }
  }
  t.pods.forEach((p, i) => {
    if (p.hostPorts && t.cni === 'cilium')
      issues.push({
        path: ['topology', 'pods', i, 'hostPorts'],
        message: "hostPorts are written by the bridge CNI chain's portmap plugin, which the cilium shape has not",
        received: t.cni,
        expected: 'topology.cni: bridge | flannel',
      });
    if (!names.node.has(p.node))
      issues.push({
        path: ['topology', 'pods', i, 'node'],
        message: 'unknown node',
        received: p.node,
        expected: `one of: ${known('node')}`,
      });
  });
  t.nodes.forEach((n, i) => {
    if (n.defaultRoute.startsWith('host/') && !names.host.has(n.defaultRoute.slice(5)))
      issues.push({
        path: ['topology', 'nodes', i, 'defaultRoute'],
        message: 'unknown host',
        received: n.defaultRoute,
        expected: `one of: ${known('host')}`,
      });
    if (n.cniChain && t.cni === 'cilium')
      issues.push({
        path: ['topology', 'nodes', i, 'cniChain'],
        message: "the cilium shape's pods are not wired by the bridge CNI chain",
        received: n.cniChain.join(', '),
        expected: 'topology.cni: bridge | flannel, or no cniChain',
      });
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
  });
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
  if (overlaps(t.clusterCIDR, LAB_NODE_NETWORK)) {
    issues.push({
      path: ['topology', 'clusterCIDR'],
      message: `overlaps the lab's node network ${LAB_NODE_NETWORK}`,
      received: t.clusterCIDR,
      expected: `a range outside ${LAB_NODE_NETWORK}`,
    });
  }
  t.services.forEach((v, i) => {
    if (cidrContains(LAB_NODE_NETWORK, `${v.clusterIP}/32`)) {
      issues.push({
        path: ['topology', 'services', i, 'clusterIP'],
        message: `inside the lab's node network ${LAB_NODE_NETWORK}`,
        received: v.clusterIP,
        expected: 'a service IP such as 10.96.0.x',
      });
    }
    v.endpoints.forEach(({ pod }, j) => {
      if (!names.pod.has(pod))
        issues.push({
          path: ['topology', 'services', i, 'endpoints', j],
          message: 'unknown pod',
          received: pod,
          expected: `one of: ${known('pod')}`,
        });
    });
    if (cidrContains(t.clusterCIDR, `${v.clusterIP}/32`))
      issues.push({
        path: ['topology', 'services', i, 'clusterIP'],
        message: 'a ClusterIP must not be inside the pod network',
        received: v.clusterIP,
        expected: `outside ${t.clusterCIDR}`,
      });
  });

  const checkRef = (ref: string, path: (string | number)[]) => {
    if (ref === 'fabric') return; // the lab's node network: always there
    const [kind, name] = ref.split('/') as [keyof typeof names, string];
    if (!names[kind].has(name))
      issues.push({ path, message: `unknown ${kind}`, received: name, expected: `one of: ${known(kind)}` });
  };
  s.probes.forEach((p, i) => {
    if (p.from.includes('/')) checkRef(p.from, ['probes', i, 'from']);
    else if (!names.pod.has(p.from))
      issues.push({
        path: ['probes', i, 'from'],
        message: 'unknown pod',
        received: p.from,
        expected: `one of: ${known('pod')}`,
      });
    // parallel runs of a fixed source port would bind one port twice: the second run fails (EADDRINUSE)
    const fixedPort = p.dns?.sourcePort !== undefined ? 'dns' : p.udp?.sourcePort !== undefined ? 'udp' : undefined;
    if (fixedPort && p.parallel > 1) {
      issues.push({
        path: ['probes', i, 'parallel'],
        message: 'parallel runs cannot share one fixed source port: each run binds it (Address already in use)',
        received: String(p.parallel),
        expected: `parallel: 1 with ${fixedPort}.sourcePort, or no sourcePort`,
      });
    }
    const { ref, field } = probeDestination(p);
    checkRef(ref, ['probes', i, probeKindOf(p)[0], field]);
  });
  const repeated = new Set(s.probes.filter((p) => p.repeat !== undefined).map((p) => p.id));

  const checkPhase = (
    expect: Record<string, unknown>,
    steps: Scenario['fault']['steps'],
    checks: Scenario['fault']['checks'],
    base: (string | number)[],
  ) => {
    for (const id of Object.keys(expect)) {
      if (!probeIds.has(id))
        issues.push({
          path: [...base, 'expect', id],
          message: 'unknown probe',
          received: id,
          expected: `one of: ${[...probeIds].join(', ')}`,
        });
      const e = expect[id];
      if (
        e &&
        typeof e === 'object' &&
        ('count' in e || 'rate' in e || 'otherwise' in e || 'sameBackend' in e) &&
        !repeated.has(id)
      ) {
        issues.push({
          path: [...base, 'expect', id],
          message: 'count, rate, otherwise and sameBackend need a repeated probe',
          received: id,
          expected: 'repeat: N on the probe',
        });
      }
      if (e && typeof e === 'object' && 'source' in e && typeof e.source === 'string')
        checkRef(e.source, [...base, 'expect', id, 'source']);
      if (e && typeof e === 'object' && 'answer' in e && typeof e.answer === 'string' && e.answer.includes('/'))
        checkRef(e.answer, [...base, 'expect', id, 'answer']);
      if (
        e &&
        typeof e === 'object' &&
        'answer' in e &&
        e.answer !== undefined &&
        !s.probes.find((p) => p.id === id)?.dns
      ) {
        issues.push({
          path: [...base, 'expect', id, 'answer'],
          message: 'answer is for DNS probes',
          received: id,
          expected: 'a probe with dns:',
        });
      }
      if (e && typeof e === 'object' && 'clientAddress' in e && typeof e.clientAddress === 'string') {
        const path = [...base, 'expect', id, 'clientAddress'];
        if (e.clientAddress.includes('/')) checkRef(e.clientAddress, path);
        const probe = s.probes.find((p) => p.id === id);
        if (probe && !probe.http && !probe.udp && !probe.download)
          issues.push({
            path,
            message: "the address the server saw is reported by the pod agent's HTTP and UDP servers only",
            received: probeKindOf(probe)[0],
            expected: 'a probe with http:, udp: or download:',
          });
        if ('outcome' in e && e.outcome !== 'ok')
          issues.push({
            path,
            message: 'can never hold: only an answer reports the address the server saw',
            received: `outcome: ${String(e.outcome)}`,
            expected: 'outcome: ok',
          });
      }
      if (e && typeof e === 'object' && 'sentTo' in e && typeof e.sentTo === 'string' && e.sentTo.includes('/'))
        checkRef(e.sentTo, [...base, 'expect', id, 'sentTo']);
      if (
        e &&
        typeof e === 'object' &&
        'servedBy' in e &&
        typeof e.servedBy === 'string' &&
        !names.pod.has(e.servedBy) &&
        !names.host.has(e.servedBy)
      ) {
        issues.push({
          path: [...base, 'expect', id, 'servedBy'],
          message: 'unknown pod or host',
          received: e.servedBy,
          expected: `one of: ${[...names.pod, ...names.host].join(', ')}`,
        });
      }
    }
    steps.forEach((step, i) => {
      const [kind, spec] = stepKindOf(step);
      for (const r of kind.refs(spec)) checkRef(r.ref, [...base, 'steps', i, kind.key, ...r.path]);
      for (const issue of kind.check?.(spec, t) ?? [])
        issues.push({ ...issue, path: [...base, 'steps', i, kind.key, ...issue.path] });
      const shapes = kind.cni?.(spec);
      if (shapes && !shapes.includes(t.cni)) {
        issues.push({
          path: [...base, 'steps', i],
          message: `this step needs the ${shapes.join(' or ')} CNI shape`,
          received: t.cni,
          expected: `topology.cni: ${shapes.join(' | ')}`,
        });
      }
    });
    for (const [i, c] of checks.entries()) checkRef(c.on, [...base, 'checks', i, 'on']);
    duplicates(
      checks.map((c) => c.id),
      [...base, 'checks'],
      'id',
      issues,
    );
  };
  checkPhase(s.baseline.expect, s.baseline.steps ?? [], s.baseline.checks, ['baseline']);
  checkPhase(s.fault.expect, s.fault.steps, s.fault.checks, ['fault']);
  for (const [i, f] of s.fixes.entries()) checkPhase(f.expect, f.steps, f.checks, ['fixes', i]);
  return issues;
}

function duplicates(values: string[], path: (string | number)[], field: string, issues: ReferenceIssue[]): void {
  const seen = new Set<string>();
  values.forEach((v, i) => {
    if (seen.has(v))
      issues.push({
        path: [...path, i, field],
        message: `duplicate ${field}`,
        received: v,
        expected: 'a unique value',
      });
    seen.add(v);
  });
}

export function ipToInt(ip: string): number {
  return ip.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
}

export function overlaps(a: string, b: string): boolean {
  return cidrContains(a, b) || cidrContains(b, a);
}

export function cidrContains(outer: string, inner: string): boolean {
  const [oIp, oLen] = outer.split('/') as [string, string];
  const [iIp, iLen] = inner.split('/') as [string, string];
  if (Number(iLen) < Number(oLen)) return false;
  const mask = Number(oLen) === 0 ? 0 : (0xffffffff << (32 - Number(oLen))) >>> 0;
  return (ipToInt(oIp) & mask) >>> 0 === (ipToInt(iIp) & mask) >>> 0;
}
