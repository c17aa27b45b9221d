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
  const facts: TraceFact[] = [];
  const json = async <T>(argv: string[]): Promise<T | undefined> => {
    const r = await target.exec(argv, { reject: false, timeoutMs: 5000 });
    try {
      return r.exitCode === 0 ? (JSON.parse(r.stdout) as T) : undefined;
    } catch {
      return undefined;
    }
  };
  const settings = await target.exec(['sysctl', '-e', ...SETTINGS], { reject: false });
  for (const m of settings.stdout.matchAll(/^(\S+) = (\S+)$/gm)) facts.push({ kind: 'setting', node, name: m[1]!, value: m[2]! });
  if (lab.mountNamespaces.has(node)) {
    const net = await json<{ tc?: { devname: string; kind: string; name: string; id: number }[] }[]>(['bpftool', '-j', '--nomount', 'net', 'show', 'dev', 'eth0']);
    for (const p of net?.[0]?.tc ?? []) facts.push({ kind: 'tc-program', node, dev: p.devname, hook: p.kind.endsWith('egress') ? 'egress' : 'ingress', name: p.name.replace(/:\[.*\]$/, ''), id: p.id }); // bpftool appends `:[*fsobj]` for pinned programs
  }
  const cgroup = lab.cgroups.get(node);
  if (cgroup) {
    const attached = (await json<{ id: number; attach_type: string; name: string }[]>(['bpftool', '-j', '--nomount', 'cgroup', 'show', cgroup])) ?? [];
    const progs = (await json<{ id: number; pinned?: string[] }[]>(['bpftool', '-j', '--nomount', '-f', 'prog', 'show'])) ?? [];
    for (const p of attached) {
      // run order is attach order among the programs of one attach type (BPF_F_ALLOW_MULTI)
      const sameType = attached.filter((x) => x.attach_type === p.attach_type);
      const pinned = progs.find((x) => x.id === p.id)?.pinned?.[0];
      // an instance's maps are pinned beside it: <instance>-maps, the instance being the program's pin or its directory
      let mappings: Mapping[] = [];
      for (const dir of pinned ? [`${pinned}-maps`, `${dirname(pinned)}-maps`] : []) if (!mappings.length) mappings = await serviceMappings(json, dir);
      facts.push({ kind: 'cgroup-program', node, cgroup, attach: p.attach_type, order: sameType.indexOf(p) + 1, of: sameType.length, name: p.name, id: p.id, pinned, mappings });
    }
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

async function serviceMappings(json: <T>(argv: string[]) => Promise<T | undefined>, dir: string): Promise<Mapping[]> {
  const services = (await json<Dump>(['bpftool', '-j', '--nomount', 'map', 'dump', 'pinned', `${dir}/cilium_lb4_services_v2`])) ?? [];
  const backends = (await json<Dump>(['bpftool', '-j', '--nomount', 'map', 'dump', 'pinned', `${dir}/cilium_lb4_backends_v3`])) ?? [];
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
