// What a packet's path depended on, read once a probe did not end well: the settings that decide
// whether bridged packets see netfilter, the tc programs on each node's uplink, and the cgroup
// connect4 programs in the order they run, each with the service entries of its own maps.
import { dirname } from 'node:path';
import type { TraceFact } from '../../../harness/model/trace-events.ts';
import type { NetnsLab } from '../netns-lab.ts';

const SETTINGS = ['net.bridge.bridge-nf-call-iptables', 'net.netfilter.nf_conntrack_tcp_be_liberal'];

export async function readTraceFacts(lab: NetnsLab): Promise<TraceFact[]> {
  const perNode = await Promise.all(lab.nodeNames.map((node) => nodeFacts(lab, node)));
  return perNode.flat();
}

async function nodeFacts(lab: NetnsLab, node: string): Promise<TraceFact[]> {
  const target = lab.node(node);
  const json = async <T>(argv: string[]): Promise<T | undefined> => {
    const r = await target.exec(argv, { reject: false, timeoutMs: 5000 });
    try {
      return r.exitCode === 0 ? (JSON.parse(r.stdout) as T) : undefined;
    } catch {
      return undefined;
    }
  };
  // every read runs side by side: each is a process in the node, and the probe's verdict waits for them all
  const [settings, tc, cgroup] = await Promise.all([settingFacts(target, node), tcFacts(lab, json, node), cgroupFacts(lab, json, node)]);
  return [...settings, ...tc, ...cgroup];
}

type Json = <T>(argv: string[]) => Promise<T | undefined>;

async function settingFacts(target: ReturnType<NetnsLab['node']>, node: string): Promise<TraceFact[]> {
  const settings = await target.exec(['sysctl', '-e', ...SETTINGS], { reject: false });
  return [...settings.stdout.matchAll(/^(\S+) = (\S+)$/gm)].map((m) => ({ kind: 'setting', node, name: m[1]!, value: m[2]! }));
}

async function tcFacts(lab: NetnsLab, json: Json, node: string): Promise<TraceFact[]> {
  if (!lab.mountNamespaces.has(node)) return [];
  const net = await json<{ tc?: { devname: string; kind: string; name: string; id: number }[] }[]>(['bpftool', '-j', '--nomount', 'net', 'show', 'dev', 'eth0']);
  // bpftool appends `:[*fsobj]` for pinned programs
  return (net?.[0]?.tc ?? []).map((p) => ({ kind: 'tc-program', node, dev: p.devname, hook: p.kind.endsWith('egress') ? 'egress' : 'ingress', name: p.name.replace(/:\[.*\]$/, ''), id: p.id }));
}

async function cgroupFacts(lab: NetnsLab, json: Json, node: string): Promise<TraceFact[]> {
  const cgroup = lab.cgroups.get(node);
  if (!cgroup) return [];
  const [attached = [], progs = []] = await Promise.all([
    json<{ id: number; attach_type: string; name: string }[]>(['bpftool', '-j', '--nomount', 'cgroup', 'show', cgroup]),
    json<{ id: number; pinned?: string[] }[]>(['bpftool', '-j', '--nomount', '-f', 'prog', 'show']),
  ]);
  // an instance's maps are pinned beside it: <instance>-maps, the instance being the program's pin or its
  // directory; each directory is read once, whichever programs share it
  const pins = new Map(attached.map((p) => [p, progs.find((x) => x.id === p.id)?.pinned?.[0]]));
  const dirs = [...new Set([...pins.values()].flatMap((pinned) => (pinned ? [`${pinned}-maps`, `${dirname(pinned)}-maps`] : [])))];
  const mappings = new Map(await Promise.all(dirs.map(async (dir) => [dir, await serviceMappings(json, dir)] as const)));
  return attached.map((p) => {
    // run order is attach order among the programs of one attach type (BPF_F_ALLOW_MULTI)
    const sameType = attached.filter((x) => x.attach_type === p.attach_type);
    const pinned = pins.get(p);
    const own = pinned ? [mappings.get(`${pinned}-maps`), mappings.get(`${dirname(pinned)}-maps`)].find((m) => m?.length) ?? [] : [];
    return { kind: 'cgroup-program', node, cgroup, attach: p.attach_type, order: sameType.indexOf(p) + 1, of: sameType.length, name: p.name, id: p.id, pinned, mappings: own };
  });
}

type Dump = { key: string[]; value: string[] }[];
const bytes = (hex: string[]) => hex.map((h) => Number.parseInt(h, 16));
const ip = (b: number[], at: number) => b.slice(at, at + 4).join('.');
const be16 = (b: number[], at: number) => (b[at]! << 8) | b[at + 1]!;
const le16 = (b: number[], at: number) => b[at]! | (b[at + 1]! << 8);
const le32 = (b: number[], at: number) => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;

/** `10.96.0.30:80 -> 10.244.1.99:8080` from a socket-LB instance's maps (Cilium's lb4_key / lb4_service / lb4_backend layout). */
type Mapping = { frontend: string; backends: string[] };

async function serviceMappings(json: Json, dir: string): Promise<Mapping[]> {
  const [services = [], backends = []] = await Promise.all([
    json<Dump>(['bpftool', '-j', '--nomount', 'map', 'dump', 'pinned', `${dir}/cilium_lb4_services_v2`]),
    json<Dump>(['bpftool', '-j', '--nomount', 'map', 'dump', 'pinned', `${dir}/cilium_lb4_backends_v3`]),
  ]);
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
