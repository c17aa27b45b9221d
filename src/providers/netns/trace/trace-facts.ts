// What a packet's path depended on, read once a probe did not end well: the settings that decide
// whether bridged packets see netfilter, each node's routing table and filter policies, the tc programs on each node's uplink, and the cgroup
// connect4 programs in the order they run, each with the service entries of its own maps.
import { dirname } from 'node:path';
import type { TraceFact } from '../../../model/trace-events.ts';
import type { TracedLab } from './traced-lab.ts';

const SETTINGS = [
  'net.bridge.bridge-nf-call-iptables',
  'net.netfilter.nf_conntrack_tcp_be_liberal',
  // whether a loopback source may leave a device after a DNAT (all, and the devices a node's routes use)
  ...['all', 'cni0', 'eth0', 'flannel.1'].map((dev) => `net.ipv4.conf.${dev}.route_localnet`),
];

export async function readTraceFacts(lab: TracedLab): Promise<TraceFact[]> {
  const perNode = await Promise.all(lab.nodeNames.map((node) => nodeFacts(lab, node)));
  return perNode.flat();
}

async function nodeFacts(lab: TracedLab, node: string): Promise<TraceFact[]> {
  // the settings and the BPF state side by side: each read is a process in the node, and the verdict waits for them all
  const [settings, routes, filter, bpf] = await Promise.all([
    settingFacts(lab, node),
    lab.node(node).exec(['ip', '-4', 'route', 'show'], { reject: false }),
    lab.node(node).exec(['iptables', '-w', '-t', 'filter', '-L', '-v', '-x', '-n'], { reject: false }),
    bpfFacts(lab, node),
  ]);
  const table: TraceFact[] = routes.exitCode === 0 ? [{ kind: 'routes', node, table: routes.stdout.trim() }] : [];
  return [...settings, ...table, ...policyFacts(node, filter.stdout), ...bpf];
}

/** The built-in chains' policies and their counters, from `iptables -L -v -x -n`'s chain headers. */
export function policyFacts(node: string, listing: string): TraceFact[] {
  return [...listing.matchAll(/^Chain (\S+) \(policy (\S+) (\d+) packets.*\)$/gm)].map((m) => ({
    kind: 'policy',
    node,
    chain: m[1]!,
    policy: m[2]!,
    packets: Number(m[3]),
    line: m[0],
  }));
}

async function settingFacts(lab: TracedLab, node: string): Promise<TraceFact[]> {
  const settings = await lab.node(node).exec(['sysctl', '-e', ...SETTINGS], { reject: false });
  return [...settings.stdout.matchAll(/^(\S+) = (\S+)$/gm)].map((m) => ({
    kind: 'setting',
    node,
    name: m[1]!,
    value: m[2]!,
  }));
}

/**
 * Runs bpftool `commands` in one process (`bpftool -j -f batch`): their outputs in order, undefined for one
 * that failed or did not run (a failed command ends the batch).
 */
async function bpftoolBatch(lab: TracedLab, node: string, commands: string[]): Promise<unknown[]> {
  if (commands.length === 0) return [];
  const r = await lab.node(node).exec(['bpftool', '-j', '-f', '--nomount', 'batch', 'file', '-'], {
    input: `${commands.join('\n')}\n`,
    reject: false,
    timeoutMs: 5000,
  });
  let results: { output?: unknown }[] = [];
  try {
    results = JSON.parse(r.stdout) as { output?: unknown }[];
  } catch {}
  return commands.map((_, i) => {
    const output = results[i]?.output;
    return output && typeof output === 'object' && 'error' in output ? undefined : output;
  });
}

type Attached = { id: number; attach_type: string; name: string };
type Pinned = { id: number; pinned?: string[] };
type NetShow = { tc?: { devname: string; kind: string; name: string; id: number }[] }[];
const SERVICES = 'cilium_lb4_services_v2';
const BACKENDS = 'cilium_lb4_backends_v3';

/**
 * The tc programs on the node's uplink and its pods' cgroup programs with their service maps: two bpftool
 * processes (what is attached and pinned, then the service maps of the instances that have them).
 */
async function bpfFacts(lab: TracedLab, node: string): Promise<TraceFact[]> {
  const cgroup = lab.inventory.socketLbCgroup(node);
  const tc = lab.inventory.bpffsHolder(node) !== undefined;
  // `net show` last: its failure (no eth0) must not end the batch before the cgroup reads
  const reads = [
    ...(cgroup ? [`cgroup show ${cgroup}`, 'prog show', 'map show'] : []),
    ...(tc ? ['net show dev eth0'] : []),
  ];
  const out = await bpftoolBatch(lab, node, reads);
  const [attached, progs, maps] = cgroup ? out : [];
  const net = tc ? out[reads.length - 1] : undefined;
  const facts: TraceFact[] = [];
  // bpftool appends `:[*fsobj]` for pinned programs
  for (const p of (net as NetShow | undefined)?.[0]?.tc ?? [])
    facts.push({
      kind: 'tc-program',
      node,
      dev: p.devname,
      hook: p.kind.endsWith('egress') ? 'egress' : 'ingress',
      name: p.name.replace(/:\[.*\]$/, ''),
      id: p.id,
    });
  if (!cgroup || !Array.isArray(attached)) return facts;
  const programs = attached as Attached[];
  const pinOf = (id: number) => ((progs as Pinned[] | undefined) ?? []).find((x) => x.id === id)?.pinned?.[0];
  const mapPins = new Set(((maps as Pinned[] | undefined) ?? []).flatMap((m) => m.pinned ?? []));
  // an instance's maps are pinned beside it: <instance>-maps, the instance being the program's pin or its directory
  const mapsDir = (pinned: string | undefined) =>
    pinned ? [`${pinned}-maps`, `${dirname(pinned)}-maps`].find((dir) => mapPins.has(`${dir}/${SERVICES}`)) : undefined;
  const dirs = [...new Set(programs.map((p) => mapsDir(pinOf(p.id))).filter((d): d is string => d !== undefined))];
  const dumps = await bpftoolBatch(
    lab,
    node,
    dirs.flatMap((dir) => [
      `map dump pinned ${dir}/${SERVICES}`,
      ...(mapPins.has(`${dir}/${BACKENDS}`) ? [`map dump pinned ${dir}/${BACKENDS}`] : []),
    ]),
  );
  const mappings = new Map<string, Mapping[]>();
  let i = 0;
  for (const dir of dirs) {
    const services = dumps[i++] as Dump | undefined;
    const backends = mapPins.has(`${dir}/${BACKENDS}`) ? (dumps[i++] as Dump | undefined) : undefined;
    mappings.set(dir, serviceMappings(services ?? [], backends ?? []));
  }
  for (const p of programs) {
    // run order is attach order among the programs of one attach type (BPF_F_ALLOW_MULTI)
    const sameType = programs.filter((x) => x.attach_type === p.attach_type);
    const pinned = pinOf(p.id);
    const dir = mapsDir(pinned);
    facts.push({
      kind: 'cgroup-program',
      node,
      cgroup,
      attach: p.attach_type,
      order: sameType.indexOf(p) + 1,
      of: sameType.length,
      name: p.name,
      id: p.id,
      pinned,
      mappings: dir ? (mappings.get(dir) ?? []) : [],
    });
  }
  return facts;
}

type Dump = { key: string[]; value: string[] }[];
const bytes = (hex: string[]) => hex.map((h) => Number.parseInt(h, 16));
const ip = (b: number[], at: number) => b.slice(at, at + 4).join('.');
const be16 = (b: number[], at: number) => (b[at]! << 8) | b[at + 1]!;
const le16 = (b: number[], at: number) => b[at]! | (b[at + 1]! << 8);
const le32 = (b: number[], at: number) => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;

/** `10.96.0.30:80 -> 10.244.1.99:8080` from a socket-LB instance's maps (Cilium's lb4_key / lb4_service / lb4_backend layout). */
type Mapping = { frontend: string; backends: string[] };

function serviceMappings(services: Dump, backends: Dump): Mapping[] {
  const backendById = new Map(backends.map((e) => [le32(bytes(e.key), 0), bytes(e.value)]));
  const out = new Map<string, string[]>();
  for (const e of services) {
    const k = bytes(e.key);
    const v = bytes(e.value);
    const frontend = `${ip(k, 0)}:${be16(k, 4)}`;
    if (!out.has(frontend)) out.set(frontend, []);
    if (le16(k, 6) === 0) continue; // the frontend entry itself
    const b = backendById.get(le32(v, 0));
    if (b) out.get(frontend)!.push(`${ip(b, 0)}:${be16(b, 4)}`);
  }
  return [...out].map(([frontend, list]) => ({ frontend, backends: list }));
}
