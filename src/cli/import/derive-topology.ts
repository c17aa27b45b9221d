// A replay's topology from a capture bundle: nodes, pods and Services from the cluster objects, each node's
// captured state from its files, and what the lab cannot restore named under notReplayed (docs/import.md).
import type { CapturedStateSpec, NotReplayedSpec } from '../../model/captured-state.ts';
import { cidrContains, ipToInt, LAB_NODE_NETWORK } from '../../model/ipv4-ranges.ts';
import type { ScenarioInput } from '../../model/scenario-schema.ts';
import { conntrackInsert, neighbourEntry } from '../../dataplane/captured-restore.ts';
import { HarnessError } from '../../model/errors.ts';
import type { Bundle, BundleNode, KubeObject } from './read-bundle.ts';

type TopologyInput = ScenarioInput['topology'];
type NodeInput = TopologyInput['nodes'][number];
type PodInput = TopologyInput['pods'][number];
type ServiceInput = NonNullable<TopologyInput['services']>[number];

export interface DerivedTopology {
  topology: TopologyInput;
  /** Kubernetes namespace/name of each pod -> its name in the scenario. */
  podNames: Map<string, string>;
}

const IPV4 = /^\d+\.\d+\.\d+\.\d+$/;
const NAME = /^[a-z]([a-z0-9-]{0,30}[a-z0-9])?$/;
/** The devices the lab makes on a node: its loopback, its NIC on the nodes' network, the CNI's. */
const LAB_DEVICES: Record<string, string[]> = {
  bridge: ['lo', 'eth0', 'cni0'],
  flannel: ['lo', 'eth0', 'cni0', 'flannel.1'],
  cilium: ['lo', 'eth0', 'cilium_host', 'cilium_net'],
};
/** Sysctl namespaces the lab sets per node namespace (conntrack's table size and hash are the host's alone). */
const RESTORED_SYSCTL =
  /^net\.(ipv4\.(ip_forward|conf\.[\w-]+(?:\.\d+)?\.[a-z_]+|ip_nonlocal_bind)|netfilter\.nf_conntrack_(tcp|udp|icmp|generic)_[a-z_]+|bridge\.bridge-nf-call-[a-z0-9]+)$/;

export function deriveTopology(bundle: Bundle): DerivedTopology {
  if (!bundle.cluster)
    throw new HarnessError(
      'USAGE',
      `${bundle.path}: manifest.json: cluster is null: the bundle has no cluster objects, and import derives the nodes, pods and Services from them`,
      'capture with a kubeconfig (or from a lab or local run), so the bundle has cluster/*.json',
    );
  const notReplayed: NotReplayedSpec[] = [];
  for (const u of bundle.clusterUnreadable) notReplayed.push({ what: `cluster ${u.what} (not captured)`, why: u.why });
  const captured = new Map(bundle.nodes.map((n) => [n.name, n]));
  const cni = detectCni(bundle.nodes, notReplayed);
  const nodeObjects = bundle.cluster.nodes.filter((n) => {
    if (captured.has(n.metadata?.name)) return true;
    notReplayed.push({
      node: safeName(n.metadata?.name),
      what: `node ${n.metadata?.name} and its pods`,
      why: 'the bundle holds no state of this node, and a replay restores every node it runs',
    });
    return false;
  });
  for (const n of bundle.nodes)
    if (!nodeObjects.some((o) => o.metadata?.name === n.name))
      throw new HarnessError('USAGE', `${bundle.path}: cluster nodes: no node object for captured node ${n.name}`);
  const nodeNames = new Map(
    nodeObjects.map((n) => [n.metadata.name as string, uniqueName(n.metadata.name, new Set())]),
  );
  const nodes: NodeInput[] = nodeObjects.map((o, i) =>
    deriveNode(o, i, captured.get(o.metadata.name)!, cni, nodeNames.get(o.metadata.name)!, notReplayed),
  );
  const taken = new Set(nodes.map((n) => n.name));
  const podNames = new Map<string, string>();
  const pods: PodInput[] = [];
  const hostNetwork = new Map<string, string[]>();
  for (const p of bundle.cluster.pods) {
    const key = `${p.metadata?.namespace ?? 'default'}/${p.metadata?.name}`;
    const node = nodeNames.get(p.spec?.nodeName);
    if (!node || p.status?.phase !== 'Running') continue;
    if (p.spec?.hostNetwork) {
      hostNetwork.set(node, [...(hostNetwork.get(node) ?? []), key]);
      continue;
    }
    const ip = p.status?.podIP as string | undefined;
    if (!ip || !IPV4.test(ip)) {
      notReplayed.push({
        node,
        what: `pod ${key}`,
        why: `its address ${ip ?? '(none)'} is not IPv4 (the lab is IPv4 only)`,
      });
      continue;
    }
    const name = uniqueName(p.metadata.name, taken, p.metadata.namespace);
    podNames.set(key, name);
    pods.push(derivePod(p, name, node, ip));
  }
  for (const [node, keys] of hostNetwork)
    notReplayed.push({
      node,
      what: `host-network pods ${keys.join(', ')}`,
      why: "the lab runs no program in a node's own namespace: what they serve there does not answer (the node's restored rules still send to it)",
    });
  const held = new Set(pods.map((p) => p.ip));
  for (const [i, n] of nodes.entries())
    n.captured!.neighbours = capturedNeighbours(captured.get(nodeObjects[i]!.metadata.name)!, n, held, notReplayed);
  const services = deriveServices(bundle.cluster.services, bundle.cluster.endpointslices, podNames, notReplayed);
  addEndpointPorts(pods, services);
  const kubernetes = /^v1\.(\d+)\./.exec(bundle.manifest.kubernetes?.serverVersion ?? '');
  return {
    topology: {
      cni,
      ...(kubernetes && Number(kubernetes[1]) >= 14 ? { kubeProxy: `1.${kubernetes[1]}` } : {}),
      clusterCIDR: clusterCIDR(nodes.map((n) => n.podCIDR)),
      nodes,
      pods,
      services,
      notReplayed,
    },
    podNames,
  };
}

/** The CNI shape the lab builds, from the devices the nodes have (unknown: bridge, and said). */
function detectCni(nodes: BundleNode[], notReplayed: NotReplayedSpec[]): 'bridge' | 'flannel' | 'cilium' {
  const links = nodes.flatMap((n) => (Array.isArray(n.json['ip-link']) ? (n.json['ip-link'] as KubeObject[]) : []));
  const names = new Set(links.map((l) => l.ifname as string));
  if (names.has('cilium_host')) {
    notReplayed.push({
      what: 'the Cilium datapath (its BPF programs and maps)',
      why: "the lab's cilium shape runs netrepro's own BPF programs, not the captured ones: the replay has Cilium's iptables rules and routes only",
    });
    return 'cilium';
  }
  if (names.has('flannel.1')) return 'flannel';
  if (!names.has('cni0'))
    notReplayed.push({
      what: `the CNI (no cni0, flannel.1 or cilium_host among the devices: ${[...names].sort().join(', ') || 'no ip-link.json'})`,
      why: 'a CNI the lab does not know: the replay wires pods with the bridge plugin on cni0, the captured rules and routes as they were',
    });
  return 'bridge';
}

function deriveNode(
  o: KubeObject,
  i: number,
  state: BundleNode,
  cni: string,
  name: string,
  notReplayed: NotReplayedSpec[],
): NodeInput {
  const iptables = state.text['iptables-save'];
  if (!iptables)
    throw new HarnessError(
      'USAGE',
      `nodes/${state.name}/iptables-save.txt: not in the bundle (${state.unreadable.find((u) => u.what === 'iptables-save')?.why ?? 'not listed in the manifest'})`,
      "a replay restores each node's iptables-save: capture the node again where iptables-save runs",
    );
  for (const u of state.unreadable) notReplayed.push({ node: name, what: `${u.what} (not captured)`, why: u.why });
  const podCIDR = o.spec?.podCIDR as string | undefined;
  if (!podCIDR || !/^\d+\.\d+\.\d+\.\d+\/\d+$/.test(podCIDR))
    throw new HarnessError(
      'USAGE',
      `cluster/nodes.json: node ${state.name}: spec.podCIDR ${podCIDR ?? '(none)'} is not an IPv4 CIDR`,
    );
  const internal = (o.status?.addresses ?? []).find(
    (a: KubeObject) => a.type === 'InternalIP' && IPV4.test(a.address),
  )?.address;
  const last = internal ? ipToInt(internal) & 0xff : 0;
  const usable = internal && cidrContains(LAB_NODE_NETWORK, `${internal}/32`) && last >= 2 && last < 100;
  if (internal && !usable)
    notReplayed.push({
      node: name,
      what: `the node's address ${internal}`,
      why: `outside the lab's node network (172.18.0.2 - 172.18.0.99): the node is 172.18.0.${i + 2} there, and captured rules naming ${internal} match nothing`,
    });
  const devices = LAB_DEVICES[cni] ?? LAB_DEVICES.bridge!;
  noteLinks(state, devices, name, notReplayed);
  if (state.text['nft-ruleset'])
    notReplayed.push({
      node: name,
      what: 'nftables tables iptables-save does not show (nft-ruleset.txt)',
      why: 'the lab restores iptables-save only: an nft-only ruleset is not loaded',
    });
  noteBpf(state, name, notReplayed);
  const sysctls = restoredSysctls(state, devices, name, notReplayed);
  const captured: CapturedStateSpec = {
    iptables,
    brNetfilter: brNetfilter(state),
    routes: capturedRoutes(state, devices, name, notReplayed),
    rules: capturedRules(state),
    conntrack: capturedConntrack(state, name, notReplayed),
    // filled in once the pods are known: only addresses no pod of the replay holds
    neighbours: [],
  };
  return {
    name,
    podCIDR,
    ...(usable ? { address: internal } : {}),
    ...(Object.keys(sysctls).length > 0 ? { sysctls } : {}),
    captured,
  };
}

function noteLinks(state: BundleNode, devices: string[], node: string, notReplayed: NotReplayedSpec[]): void {
  const links = Array.isArray(state.json['ip-link']) ? (state.json['ip-link'] as KubeObject[]) : [];
  const other = links.filter((l) => !devices.includes(l.ifname) && l.linkinfo?.info_kind !== 'veth');
  if (other.length > 0)
    notReplayed.push({
      node,
      what: `devices ${other.map((l) => `${l.ifname} (${l.linkinfo?.info_kind ?? l.link_type ?? 'unknown'})`).join(', ')}`,
      why: `the lab makes ${devices.join(', ')} and the pods' veths only: routes through these devices are left out`,
    });
  const addrs = Array.isArray(state.json['ip-addr']) ? (state.json['ip-addr'] as KubeObject[]) : [];
  const v6 = addrs.flatMap((a) =>
    (a.addr_info ?? [])
      .filter((x: KubeObject) => x.family === 'inet6' && x.scope !== 'link')
      .map((x: KubeObject) => `${x.local} on ${a.ifname}`),
  );
  if (v6.length > 0)
    notReplayed.push({
      node,
      what: `IPv6 addresses ${v6.join(', ')}`,
      why: 'the lab is IPv4 only (ip6tables and IPv6 routes are not restored either)',
    });
}

function noteBpf(state: BundleNode, node: string, notReplayed: NotReplayedSpec[]): void {
  const net = state.json['bpf-net'];
  const attached = JSON.stringify(net ?? []).match(/"(name|prog_id|id)"/g);
  const progs = Array.isArray(net)
    ? net.flatMap((x: KubeObject) => [...(x.xdp ?? []), ...(x.tc ?? []), ...(x.flow_dissector ?? [])])
    : [];
  if (progs.length > 0 || (attached && !Array.isArray(net)))
    notReplayed.push({
      node,
      what: `BPF programs on devices (${progs.map((p: KubeObject) => `${p.devname ?? p.ifname ?? '?'}: ${p.name ?? p.id}`).join(', ') || 'bpf-net.json'})`,
      why: 'the lab does not load captured BPF programs (a Cilium datapath, XDP): traffic they handled goes by the restored rules alone',
    });
  const cgroup = state.json['bpf-cgroup'];
  if (Array.isArray(cgroup) && cgroup.some((c: KubeObject) => (c.programs ?? []).length > 0))
    notReplayed.push({
      node,
      what: 'cgroup BPF programs (bpf-cgroup.json: socket load balancing)',
      why: 'the lab does not attach captured cgroup programs: connections are not rewritten in the system calls',
    });
}

function brNetfilter(state: BundleNode): boolean {
  const modules = state.json.modules as Record<string, unknown> | undefined;
  if (modules && typeof modules.br_netfilter === 'boolean') return modules.br_netfilter;
  const sysctl = (state.json.sysctls as Record<string, string> | undefined)?.['net.bridge.bridge-nf-call-iptables'];
  return sysctl !== undefined && String(sysctl).trim() === '1';
}

function restoredSysctls(
  state: BundleNode,
  devices: string[],
  node: string,
  notReplayed: NotReplayedSpec[],
): Record<string, string> {
  const all = (state.json.sysctls ?? {}) as Record<string, unknown>;
  const out: Record<string, string> = {};
  const left = new Map<string, string[]>();
  const leave = (why: string, item: string) => left.set(why, [...(left.get(why) ?? []), item]);
  for (const [printed, raw] of Object.entries(all)) {
    const value = String(raw).trim();
    // sysctl prints a dot in a device's name as a slash (net.ipv4.conf.flannel/1.rp_filter); a scenario names the
    // device as it is (flannel.1), and the lab writes the slash again when it sets it
    const key = printed.replace(
      /^(net\.ipv[46]\.(?:conf|neigh)\.)([^.]+)\./,
      (_, at: string, dev: string) => `${at}${dev.replaceAll('/', '.')}.`,
    );
    const device = /^net\.ipv[46]\.(conf|neigh)\.(.+)\.[^.]+$/.exec(key)?.[2];
    if (device !== undefined && device !== 'all' && device !== 'default' && !devices.includes(device))
      leave(`device ${device} is not one the lab makes`, `${key}=${value}`);
    else if (!RESTORED_SYSCTL.test(key))
      leave(
        "not among the sysctls the lab sets in a node's namespace (a host-wide one such as nf_conntrack_max, or one it does not know)",
        `${key}=${value}`,
      );
    else if (!/^[\w.-]+$/.test(value)) leave('a value of several words', `${key}=${value}`);
    else out[key] = value;
  }
  for (const [why, items] of left) notReplayed.push({ node, what: `sysctls ${items.join(', ')}`, why });
  return out;
}

/** The captured routes but the kernel's own, as `ip route add` arguments; those through devices the lab lacks are said. */
function capturedRoutes(state: BundleNode, devices: string[], node: string, notReplayed: NotReplayedSpec[]): string[] {
  const routes = Array.isArray(state.json['ip-route']) ? (state.json['ip-route'] as KubeObject[]) : [];
  const out: string[] = [];
  const left: string[] = [];
  for (const r of routes) {
    const table = r.table ?? 'main';
    if (table === 'local' || r.protocol === 'kernel') continue;
    const text = [
      r.type && r.type !== 'unicast' ? r.type : '',
      r.dst,
      r.gateway ? `via ${r.gateway}` : '',
      r.dev ? `dev ${r.dev}` : '',
      r.protocol ? `proto ${r.protocol}` : '',
      r.scope && r.scope !== 'global' ? `scope ${r.scope}` : '',
      r.prefsrc ? `src ${r.prefsrc}` : '',
      r.metric !== undefined ? `metric ${r.metric}` : '',
      (r.flags ?? []).includes('onlink') ? 'onlink' : '',
      table !== 'main' ? `table ${table}` : '',
    ]
      .filter(Boolean)
      .join(' ');
    if (r.dev && !devices.includes(r.dev)) left.push(text);
    else out.push(text);
  }
  if (left.length > 0)
    notReplayed.push({
      node,
      what: `routes ${left.join('; ')}`,
      why: "through a device the lab does not make (a pod's veth is named by its runtime)",
    });
  return out;
}

/** Policy rules beyond the kernel's three (local 0, main 32766, default 32767), as `ip rule add` arguments. */
function capturedRules(state: BundleNode): string[] {
  const rules = Array.isArray(state.json['ip-rule']) ? (state.json['ip-rule'] as KubeObject[]) : [];
  return rules
    .filter(
      (r) =>
        !(r.src === 'all' && !r.dst && !r.fwmark && !r.iif && !r.oif && ['local', 'main', 'default'].includes(r.table)),
    )
    .map((r) =>
      [
        `priority ${r.priority}`,
        r.src && r.src !== 'all' ? `from ${r.src}${r.srclen !== undefined ? `/${r.srclen}` : ''}` : '',
        r.dst ? `to ${r.dst}${r.dstlen !== undefined ? `/${r.dstlen}` : ''}` : '',
        r.fwmark ? `fwmark ${r.fwmark}${r.fwmask ? `/${r.fwmask}` : ''}` : '',
        r.iif ? `iif ${r.iif}` : '',
        r.oif ? `oif ${r.oif}` : '',
        `table ${r.table}`,
      ]
        .filter(Boolean)
        .join(' '),
    );
}

/**
 * The captured neighbours of the node's pod addresses that no pod of the replay holds (a pod deleted since: the
 * node still sends to its last MAC), on cni0. Pods of the replay get their MACs anew; an entry for an address
 * outside the node's pods that the replay does not give to anything is said.
 */
function capturedNeighbours(
  state: BundleNode,
  node: NodeInput,
  held: ReadonlySet<string | undefined>,
  notReplayed: NotReplayedSpec[],
): string[] {
  const entries = Array.isArray(state.json['ip-neigh']) ? (state.json['ip-neigh'] as KubeObject[]) : [];
  const kept: string[] = [];
  const left: string[] = [];
  const gateway = ipToInt(node.podCIDR.split('/')[0]!) + 1;
  for (const e of entries) {
    const entry = neighbourEntry(e);
    if (!entry || held.has(e.dst) || e.dst === node.address) continue;
    const podAddress = cidrContains(node.podCIDR, `${e.dst}/32`) && ipToInt(e.dst) !== gateway;
    if (podAddress && e.dev === 'cni0') kept.push(entry);
    else if (!podAddress && e.dev === 'eth0' && !cidrContains(LAB_NODE_NETWORK, `${e.dst}/32`)) left.push(e.dst);
  }
  if (left.length > 0)
    notReplayed.push({
      node: node.name,
      what: `neighbour entries for ${left.join(', ')}`,
      why: "outside the lab's node network and the node's pods: the replay holds no such address (a gateway or host of the captured network)",
    });
  return kept;
}

function capturedConntrack(state: BundleNode, node: string, notReplayed: NotReplayedSpec[]): string[] {
  const text = state.text.conntrack;
  if (!text) return [];
  const lines = text.split('\n').filter((l) => /^(ipv[46]\s+\d+\s+)?[a-z]+\s+\d+\s+\d+\s/.test(l.trim()));
  const kept: string[] = [];
  const why = new Map<string, number>();
  for (const line of lines) {
    const insert = conntrackInsert(line);
    if ('argv' in insert) kept.push(line.trim().replace(/\s+/g, ' '));
    else why.set(insert.why, (why.get(insert.why) ?? 0) + 1);
  }
  for (const [reason, count] of why)
    notReplayed.push({ node, what: `${count} conntrack entr${count === 1 ? 'y' : 'ies'}`, why: reason });
  if (state.conntrack?.truncatedAt)
    notReplayed.push({
      node,
      what: `conntrack entries after the first ${state.conntrack.truncatedAt}`,
      why: 'the capture stopped there (bounded)',
    });
  return kept;
}

function derivePod(p: KubeObject, name: string, node: string, ip: string): PodInput {
  const ports = (p.spec?.containers ?? []).flatMap((c: KubeObject) => c.ports ?? []) as KubeObject[];
  const named = ports.filter(
    (c) =>
      typeof c.name === 'string' && /^(?=.*[a-z])[a-z0-9]([a-z0-9-]*[a-z0-9])?$/.test(c.name) && c.name.length <= 15,
  );
  const hostPorts = ports.filter((c) => c.hostPort);
  return {
    name,
    node,
    ip,
    serve: [...new Map(ports.map((c) => program(c as ContainerPort)).map((x) => [JSON.stringify(x), x])).values()],
    ...(named.length > 0
      ? { ports: named.map((c) => ({ name: c.name, containerPort: c.containerPort, protocol: c.protocol ?? 'TCP' })) }
      : {}),
    ...(hostPorts.length > 0
      ? {
          hostPorts: hostPorts.map((c) => ({
            hostPort: c.hostPort,
            containerPort: c.containerPort,
            protocol: c.protocol ?? 'TCP',
          })),
        }
      : {}),
  };
}

/** What the lab serves in place of the pod's program: HTTP on a TCP port, DNS on UDP 53, a UDP echo elsewhere. */
interface ContainerPort {
  containerPort: number;
  protocol?: string;
}

function program(c: ContainerPort): { http: number } | { udp: number } | { dns: number } {
  if ((c.protocol ?? 'TCP') === 'TCP') return { http: c.containerPort };
  return c.containerPort === 53 ? { dns: 53 } : { udp: c.containerPort };
}

function deriveServices(
  services: KubeObject[],
  slices: KubeObject[],
  podNames: Map<string, string>,
  notReplayed: NotReplayedSpec[],
): ServiceInput[] {
  const out: ServiceInput[] = [];
  const taken = new Set<string>();
  for (const s of services) {
    const key = `${s.metadata?.namespace ?? 'default'}/${s.metadata?.name}`;
    const spec = s.spec ?? {};
    const type = spec.type ?? 'ClusterIP';
    if (!['ClusterIP', 'NodePort', 'LoadBalancer'].includes(type)) {
      notReplayed.push({
        what: `service ${key} (type ${type})`,
        why: 'the lab models ClusterIP, NodePort and LoadBalancer Services',
      });
      continue;
    }
    if (spec.clusterIP !== 'None' && !IPV4.test(spec.clusterIP ?? '')) {
      notReplayed.push({ what: `service ${key}`, why: `its clusterIP ${spec.clusterIP} is not IPv4` });
      continue;
    }
    const lbIP = s.status?.loadBalancer?.ingress?.[0]?.ip ?? spec.loadBalancerIP;
    if (type === 'LoadBalancer' && !lbIP) {
      notReplayed.push({ what: `service ${key}`, why: 'a LoadBalancer without an address in its status' });
      continue;
    }
    const endpoints = serviceEndpoints(s, slices, podNames);
    out.push({
      name: uniqueName(s.metadata.name, taken, s.metadata.namespace),
      namespace: safeName(s.metadata?.namespace ?? 'default'),
      clusterIP: spec.clusterIP,
      type,
      ...(type !== 'ClusterIP' && spec.externalTrafficPolicy
        ? { externalTrafficPolicy: spec.externalTrafficPolicy }
        : {}),
      ...(spec.internalTrafficPolicy ? { internalTrafficPolicy: spec.internalTrafficPolicy } : {}),
      ...(type === 'LoadBalancer' ? { loadBalancerIP: lbIP } : {}),
      ...(spec.loadBalancerSourceRanges?.length ? { loadBalancerSourceRanges: spec.loadBalancerSourceRanges } : {}),
      ...(spec.healthCheckNodePort ? { healthCheckNodePort: spec.healthCheckNodePort } : {}),
      ...(spec.sessionAffinity === 'ClientIP'
        ? {
            sessionAffinity: 'ClientIP' as const,
            ...(spec.sessionAffinityConfig ? { sessionAffinityConfig: spec.sessionAffinityConfig } : {}),
          }
        : {}),
      ...(spec.publishNotReadyAddresses ? { publishNotReadyAddresses: true } : {}),
      ports: (spec.ports ?? []).map((p: KubeObject) => ({
        ...(p.name ? { name: p.name } : {}),
        port: p.port,
        targetPort: p.targetPort ?? p.port,
        protocol: p.protocol ?? 'TCP',
        ...(type !== 'ClusterIP' && p.nodePort ? { nodePort: p.nodePort } : {}),
      })),
      endpoints,
    });
  }
  return out;
}

/** The Service's endpoints from its EndpointSlices (v1beta1 or v1): the pods they name, with their conditions. */
function serviceEndpoints(
  s: KubeObject,
  slices: KubeObject[],
  podNames: Map<string, string>,
): ServiceInput['endpoints'] {
  const ns = s.metadata?.namespace ?? 'default';
  const mine = slices.filter(
    (x) =>
      (x.metadata?.namespace ?? 'default') === ns &&
      x.metadata?.labels?.['kubernetes.io/service-name'] === s.metadata?.name,
  );
  const out: ServiceInput['endpoints'] = [];
  for (const slice of mine)
    for (const e of slice.endpoints ?? []) {
      if (e.targetRef?.kind !== 'Pod') continue;
      const pod = podNames.get(`${e.targetRef.namespace ?? ns}/${e.targetRef.name}`);
      if (!pod || out.some((x) => typeof x === 'object' && x.pod === pod)) continue;
      const ready = e.conditions?.ready !== false;
      const terminating = e.conditions?.terminating === true;
      out.push(ready && !terminating ? pod : { pod, ready, terminating });
    }
  return out;
}

/** A pod backing a Service on a port it does not declare still serves there: the lab starts a program on it. */
function addEndpointPorts(pods: PodInput[], services: ServiceInput[]): void {
  for (const s of services)
    for (const e of s.endpoints) {
      const pod = pods.find((p) => p.name === (typeof e === 'string' ? e : e.pod));
      if (!pod) continue;
      for (const port of s.ports) {
        const number =
          typeof port.targetPort === 'number'
            ? port.targetPort
            : pod.ports?.find((c) => c.name === port.targetPort)?.containerPort;
        if (number === undefined) continue;
        const wanted = program({ containerPort: number, protocol: port.protocol });
        const serve = (pod.serve ??= []);
        if (!serve.some((x) => JSON.stringify(x) === JSON.stringify(wanted))) serve.push(wanted);
      }
    }
  for (const p of pods) if (p.serve?.length === 0) delete p.serve;
}

/** The smallest common range of the nodes' pod subnets, /16 at most specific (kube's default 10.244.0.0/16). */
function clusterCIDR(podCIDRs: string[]): string {
  const ints = podCIDRs.map((c) => ipToInt(c.split('/')[0]!));
  let len = Math.min(16, ...podCIDRs.map((c) => Number(c.split('/')[1])));
  const masked = (n: number, l: number) => (l === 0 ? 0 : (n & ((0xffffffff << (32 - l)) >>> 0)) >>> 0);
  while (len > 0 && new Set(ints.map((n) => masked(n, len))).size > 1) len--;
  const base = masked(ints[0] ?? 0, len);
  return `${[24, 16, 8, 0].map((s) => (base >>> s) & 0xff).join('.')}/${len}`;
}

/** A scenario name for a Kubernetes name: as it is when it fits, else shortened; one of its own. */
function uniqueName(name: string, taken: Set<string>, namespace?: string): string {
  let candidate = safeName(name);
  if (taken.has(candidate) && namespace) candidate = safeName(`${namespace}-${name}`);
  for (let i = 2; taken.has(candidate); i++) candidate = safeName(`${name.slice(0, 28)}-${i}`);
  taken.add(candidate);
  return candidate;
}

function safeName(name: string): string {
  let s = String(name)
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .replace(/^[^a-z]+/, '');
  if (s.length > 32) s = s.slice(0, 32);
  s = s.replace(/-+$/, '');
  return NAME.test(s) ? s : `x${s}`.slice(0, 32).replace(/-+$/, '');
}
