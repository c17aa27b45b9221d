// kube-proxy's sync after a Service or EndpointSlice change, on one node: its chains rewritten in one
// `iptables-restore --noflush` (chains of services and endpoints that are gone flushed and deleted with -X,
// as syncProxyRules does), its jumps ensured, then the UDP conntrack clean-up of its release
// (kube-proxy-layout.ts `udpConntrack`). Pure: the lab runs the result, tests read it.
import type { TopologySpec } from '../../model/scenario-schema.ts';
import { endpointSlices, publishedReady, serviceObject, type PodPlacement } from '../../contract/kube-objects.ts';
import type { IptablesOp } from '../../dataplane/iptables-ops.ts';
import { kubeProxyLayout, type KubeProxyLayout } from '../../dataplane/kube-proxy-layout.ts';
import type { KubeProxySettings } from '../../dataplane/node-iptables.ts';
import { kubeProxyRules, restorePayload, type KubeProxyRules } from '../../dataplane/kube-proxy-rules.ts';
import type { Target } from '../../contract/provider.ts';
import { nodeAddress } from '../../dataplane/node-network.ts';

/** The sysctl kube-proxy >= 1.29 reads at start and at each sync (it then leaves the INVALID DROP out). */
export const BE_LIBERAL = 'net.netfilter.nf_conntrack_tcp_be_liberal';

/** be_liberal as the node's kube-proxy would read it now. */
export async function readBeLiberal(node: Target): Promise<boolean> {
  return (await node.exec(['sysctl', '-n', BE_LIBERAL])).stdout.trim() === '1';
}

type ServiceSpec = TopologySpec['services'][number];

/** Per-service and per-endpoint chains kube-proxy owns and deletes when they are no longer written. */
const SERVICE_CHAIN = /^:(KUBE-(?:SVC|SVL|EXT|SEP|XLB|FW)-[A-Z2-7]{16}) /;

/** The sync's restore (stale chains of `save` deleted) and its ensured jumps. */
export function kubeProxySyncOps(rules: KubeProxyRules, save: string): IptablesOp[] {
  const written = new Set(Object.values(rules.tables).flatMap((t) => t.chains));
  const stale = { filter: [] as string[], nat: [] as string[] };
  let table: 'filter' | 'nat' | undefined;
  for (const line of save.split('\n')) {
    if (line.startsWith('*')) table = line === '*nat' ? 'nat' : line === '*filter' ? 'filter' : undefined;
    const m = SERVICE_CHAIN.exec(line);
    if (table && m && !written.has(m[1]!)) stale[table].push(m[1]!);
  }
  const payload = restorePayload({
    tables: {
      filter: {
        chains: [...rules.tables.filter.chains, ...stale.filter],
        rules: [...rules.tables.filter.rules, ...stale.filter.map((c) => `-X ${c}`)],
      },
      nat: {
        chains: [...rules.tables.nat.chains, ...stale.nat],
        rules: [...rules.tables.nat.rules, ...stale.nat.map((c) => `-X ${c}`)],
      },
    },
    jumps: [],
  });
  return [{ op: 'restore', payload }, ...rules.jumps.map((j) => ({ op: 'ensure-first' as const, ...j }))];
}

export function rulesFor(
  topology: TopologySpec,
  proxy: KubeProxySettings,
  nodeName: string,
  placements: ReadonlyMap<string, PodPlacement>,
  beLiberal: boolean,
): KubeProxyRules {
  return kubeProxyRules({
    layout: kubeProxyLayout(proxy.release),
    services: topology.services.map(serviceObject),
    slices: topology.services.flatMap((s) => endpointSlices(s, placements, topology.pods)),
    clusterCIDR: proxy.clusterCIDR,
    masqueradeAll: proxy.masqueradeAll,
    nodeName,
    nodeIP: nodeAddress(topology.nodes, nodeName),
    beLiberal,
    nfacctCounters: false,
  });
}

/** Endpoints kube-proxy sends new traffic to: ready ones in the slice (terminating pods are not, unless the Service publishes not-ready addresses). */
const usable = (s: ServiceSpec | undefined, placements: ReadonlyMap<string, PodPlacement>) =>
  new Set(
    (s?.endpoints ?? [])
      .filter((e) => publishedReady(s!, e))
      .map((e) => placements.get(e.pod)?.ip)
      .filter((ip): ip is string => !!ip),
  );

/** Serving endpoints (the slice's `serving` condition: ready, terminating or not), whose flows the reconciler keeps. */
const serving = (s: ServiceSpec, placements: ReadonlyMap<string, PodPlacement>) =>
  new Set(
    s.endpoints
      .filter((e) => e.ready)
      .map((e) => placements.get(e.pod)?.ip)
      .filter((ip): ip is string => !!ip),
  );

type PortSpec = ServiceSpec['ports'][number];
const samePort = (a: PortSpec, b: PortSpec) => a.port === b.port && a.protocol === b.protocol;

/**
 * The event clean-up (<= 1.31): the VIPs of UDP service ports that went from no usable endpoint to some (a port a
 * Service just gained had none) or were removed, every entry to them deleted first (staleServices); then, per
 * endpoint no longer usable, the entries DNATed to it.
 */
function eventDeletes(
  before: readonly ServiceSpec[],
  after: readonly ServiceSpec[],
  placements: ReadonlyMap<string, PodPlacement>,
): string[][] {
  const staleVips = new Set<string>();
  const nodePorts: string[][] = [];
  const endpoints: string[][] = [];
  for (const was of before) {
    const svc = after.find((a) => a.name === was.name && a.namespace === was.namespace);
    if (was.ports.some((p) => p.protocol === 'UDP' && !svc?.ports.some((q) => samePort(p, q))))
      staleVips.add(was.clusterIP);
  }
  for (const svc of after) {
    const udp = svc.ports.filter((p) => p.protocol === 'UDP');
    if (udp.length === 0) continue;
    const prior = before.find((b) => b.name === svc.name && b.namespace === svc.namespace);
    const old = usable(prior, placements);
    const now = usable(svc, placements);
    const active = now.size === 0 ? [] : udp.filter((p) => old.size === 0 || !prior?.ports.some((q) => samePort(p, q)));
    if (active.length > 0) staleVips.add(svc.clusterIP);
    for (const p of active)
      if (p.nodePort) nodePorts.push(['conntrack', '-D', '-p', 'udp', '--dport', String(p.nodePort)]);
    for (const ip of old) {
      if (now.has(ip)) continue;
      endpoints.push(['conntrack', '-D', '--orig-dst', svc.clusterIP, '--dst-nat', ip, '-p', 'udp']);
      for (const p of udp)
        if (p.nodePort)
          endpoints.push(['conntrack', '-D', '-p', 'udp', '--dport', String(p.nodePort), '--dst-nat', ip]);
    }
  }
  return [
    ...[...staleVips].map((vip) => ['conntrack', '-D', '--orig-dst', vip, '-p', 'udp']),
    ...nodePorts,
    ...endpoints,
  ];
}

/** A conntrack entry as `conntrack -L` prints it: original tuple, then the reply tuple. */
export interface UdpFlow {
  src: string;
  dst: string;
  sport: number;
  dport: number;
  replySrc: string;
}

export function parseUdpFlows(list: string): UdpFlow[] {
  const flows: UdpFlow[] = [];
  for (const line of list.split('\n')) {
    const src = [...line.matchAll(/src=(\S+)/g)].map((m) => m[1]!);
    const dst = [...line.matchAll(/dst=(\S+)/g)].map((m) => m[1]!);
    const sport = [...line.matchAll(/sport=(\d+)/g)].map((m) => Number(m[1]));
    const dport = [...line.matchAll(/dport=(\d+)/g)].map((m) => Number(m[1]));
    if (!line.startsWith('udp') || src.length < 2 || dst.length < 1) continue;
    flows.push({ src: src[0]!, dst: dst[0]!, sport: sport[0]!, dport: dport[0]!, replySrc: src[1]! });
  }
  return flows;
}

/**
 * The `conntrack -D` commands kube-proxy's UDP clean-up runs after a change from `before` to `after`.
 * `flows` (the node's UDP entries) is read only by the reconciler, which deletes entry by entry.
 *  - event (<= 1.31): for each endpoint that was usable and is not any more, entries to the VIP DNATed to it
 *    (ClearEntriesForNAT) and to its nodePort (ClearEntriesForPortNAT); for a UDP service port going from no
 *    usable endpoint to some (a port the Service just gained has had none), every entry to the VIP and nodePort
 *    (ClearEntriesForIP / ClearEntriesForPort); for a UDP service port removed, every entry to the VIP
 *    (UDPStaleClusterIP). v1.20.2: pkg/proxy/endpoints.go detectStaleConnections (staleServiceNames per service
 *    port), pkg/proxy/service.go unmerge, pkg/proxy/iptables/proxier.go syncProxyRules.
 *  - reconciler (1.32 .. before PR 139629, CleanStaleEntries in pkg/proxy/conntrack/cleanup.go): for each UDP
 *    service port with serving endpoints (terminating ones included), an entry to VIP:port or to *:nodePort
 *    whose reply comes from anything but one of them is deleted, by the same filters upstream builds
 *    (orig-dst + orig-port-dst + reply-src; orig-port-dst + reply-src). A service left with none is skipped
 *    (kubernetes#139628).
 */
export function udpConntrackDeletes(
  layout: KubeProxyLayout,
  before: readonly ServiceSpec[],
  after: readonly ServiceSpec[],
  placements: ReadonlyMap<string, PodPlacement>,
  flows: readonly UdpFlow[],
): string[][] {
  if (layout.udpConntrack === 'event') return eventDeletes(before, after, placements);
  const out: string[][] = [];
  for (const svc of after) {
    const udp = svc.ports.filter((p) => p.protocol === 'UDP');
    if (udp.length === 0) continue;
    const keep = serving(svc, placements);
    if (keep.size === 0) continue; // kubernetes#139628
    for (const p of udp) {
      for (const f of flows) {
        if (keep.has(f.replySrc)) continue;
        if (f.dst === svc.clusterIP && f.dport === p.port) {
          out.push([
            'conntrack',
            '-D',
            '-p',
            'udp',
            '--orig-dst',
            f.dst,
            '--orig-port-dst',
            String(f.dport),
            '--reply-src',
            f.replySrc,
          ]);
        }
        if (p.nodePort && f.dport === p.nodePort)
          out.push(['conntrack', '-D', '-p', 'udp', '--orig-port-dst', String(f.dport), '--reply-src', f.replySrc]);
      }
    }
  }
  return out;
}
