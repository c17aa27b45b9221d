// What one node's `iptables-save` shows of a Service, read the way kube-proxy's iptables mode writes it in
// every release from 1.15: a rule belongs to a Service when its comment names it ("ns/name:port cluster IP",
// "ns/name:port has no endpoints", ...), and its endpoints are the DNAT targets of the chains its ClusterIP
// rule leads to (KUBE-SVC, KUBE-SVL, KUBE-SEP), followed by name, since SVC->SEP rules carry no comment
// before 1.20 and name the endpoint from 1.24 on. Pure: src/dataplane/kube-proxy-rules.ts writes the same
// layouts, and test/unit/service-rules.test.ts reads its renders.

/** A node's rules by table: each table's `-A` lines as iptables-save prints them. */
export interface NodeRules {
  nat: string[];
  filter: string[];
}

/** A Service as kube-proxy names it: the cluster's namespace (prefixed on a shared cluster) and the name. */
export interface ServiceRef {
  namespace: string;
  name: string;
}

export interface PortRef {
  name?: string;
  port: number;
  protocol: 'TCP' | 'UDP';
}

/** The nat and filter tables of an `iptables-save` (the other tables are left out). */
export function parseIptablesSave(text: string): NodeRules {
  const rules: NodeRules = { nat: [], filter: [] };
  let table: string[] | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('*')) table = line === '*nat' ? rules.nat : line === '*filter' ? rules.filter : undefined;
    else if (line.startsWith('-A ')) table?.push(line);
  }
  return rules;
}

const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A rule whose comment names the Service (any of its ports), or one port when `port` is given: kube-proxy
 * names a port `ns/name:port`, an unnamed one `ns/name` (`"ns/name:port cluster IP"`, `"Balancing rule 0 for
 * ns/name:port"`, unquoted where iptables-save needs no quotes).
 */
export function mentions(rule: string, svc: ServiceRef, port?: { name?: string }): boolean {
  const portPart = port === undefined ? '(:[^" ]*)?' : port.name ? `:${literal(port.name)}` : '';
  return new RegExp(`[" ]${literal(svc.namespace)}/${literal(svc.name)}${portPart}[" ]`).test(rule);
}

const matchesPort = (rule: string, proto: string, port: number) =>
  rule.includes(` -p ${proto.toLowerCase()} `) && new RegExp(` --dport ${port}( |$)`).test(rule);

/** The service port's rules in KUBE-SERVICES (nat: to its chain; filter: its REJECT or DROP without endpoints). */
export function clusterIPRules(rules: NodeRules, svc: ServiceRef, port: PortRef): string[] {
  return [...rules.nat, ...rules.filter].filter(
    (r) => r.startsWith('-A KUBE-SERVICES ') && mentions(r, svc, port) && matchesPort(r, port.protocol, port.port),
  );
}

/** The service port's node-port rules: nat KUBE-NODEPORTS, or filter KUBE-EXTERNAL-SERVICES when it has no (local) endpoints. */
export function nodePortRules(rules: NodeRules, svc: ServiceRef, port: PortRef, nodePort?: number): string[] {
  return [
    ...rules.nat.filter((r) => r.startsWith('-A KUBE-NODEPORTS ')),
    ...rules.filter.filter((r) => r.startsWith('-A KUBE-EXTERNAL-SERVICES ')),
  ].filter(
    (r) =>
      mentions(r, svc, port) &&
      r.includes(` -p ${port.protocol.toLowerCase()} `) &&
      (nodePort === undefined || matchesPort(r, port.protocol, nodePort)),
  );
}

/** The rules of every nat chain reached from `from` by jumps (`-j KUBE-...`), each chain once. */
function reached(nat: readonly string[], from: readonly string[]): string[] {
  const chains = new Map<string, string[]>();
  for (const r of nat) {
    const chain = r.split(' ')[1]!;
    chains.set(chain, [...(chains.get(chain) ?? []), r]);
  }
  const seen = new Set<string>();
  const out: string[] = [];
  const follow = (r: string) => {
    const target = / -j (KUBE-\S+)/.exec(r)?.[1];
    if (!target || seen.has(target)) return;
    seen.add(target);
    for (const next of chains.get(target) ?? []) {
      out.push(next);
      follow(next);
    }
  };
  for (const r of from) follow(r);
  return out;
}

/** The rules a service port's ClusterIP traffic can go through on this node: its chains and its endpoints' chains. */
export function clusterIPChains(rules: NodeRules, svc: ServiceRef, port: PortRef): string[] {
  return reached(rules.nat, clusterIPRules({ nat: rules.nat, filter: [] }, svc, port));
}

/** The `ip:port` endpoints a service port's ClusterIP DNATs to on this node. */
export function clusterIPEndpoints(rules: NodeRules, svc: ServiceRef, port: PortRef): Set<string> {
  return new Set(clusterIPChains(rules, svc, port).flatMap((r) => /-j DNAT --to-destination (\S+)/.exec(r)?.[1] ?? []));
}

/**
 * externalTrafficPolicy Local as written while the Service has endpoints: its external chain (KUBE-XLB before
 * 1.24, KUBE-EXT from 1.24) masquerades and routes traffic from the node itself (`--src-type LOCAL`), which
 * the Cluster policy's chains never match on.
 */
export function showsLocalExternalPolicy(rules: NodeRules, svc: ServiceRef): boolean {
  return rules.nat.some((r) => /^-A KUBE-(XLB|EXT)-/.test(r) && r.includes(' --src-type LOCAL ') && mentions(r, svc));
}

/** ClientIP affinity with this timeout, as written while the port has endpoints: `-m recent --rcheck --seconds N`. */
export function showsAffinity(rules: NodeRules, svc: ServiceRef, port: PortRef, seconds?: number): boolean {
  const check = seconds === undefined ? ' -m recent ' : ` -m recent --rcheck --seconds ${seconds} `;
  return clusterIPChains(rules, svc, port).some((r) => r.includes(check));
}

/** The nat rules sending a service port's load balancer address on (`"ns/name:port loadbalancer IP"` in KUBE-SERVICES). */
export function loadBalancerRules(rules: NodeRules, svc: ServiceRef, port: PortRef, ip: string): string[] {
  return rules.nat.filter(
    (r) =>
      r.startsWith(`-A KUBE-SERVICES -d ${ip}/32 `) &&
      r.includes(' loadbalancer IP') &&
      mentions(r, svc, port) &&
      matchesPort(r, port.protocol, port.port),
  );
}

/** The source ranges a service's firewall chains (KUBE-FW-*) let through, each as written (`-s CIDR`). */
export function firewallRanges(rules: NodeRules, svc: ServiceRef): Set<string> {
  return new Set(
    rules.nat.flatMap((r) =>
      r.startsWith('-A KUBE-FW-') && mentions(r, svc) ? (/ -s (\S+) /.exec(r)?.[1] ?? []) : [],
    ),
  );
}
