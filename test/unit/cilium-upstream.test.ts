// Our cilium shape against Cilium's own sources. The facts below were read by hand in cilium/cilium
// (the revisions named with each group) and written down in our words: struct layouts as byte
// offsets, map names and types, program names, CILIUM_FORWARD rule texts. The tests compile our C
// (clusters/netns/bpf/*.c) and compare its BTF with these facts, and our rule writer with the rule
// texts, so a change on either side that breaks the model shows up here. No upstream code is copied.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bpfObject } from '../../clusters/netns/bpf-build.ts';
import { ciliumForwardRules } from '../../clusters/netns/cilium-forward-rules.ts';
import { masqueradeConfig, SNAT_PORTS, socketLbEntries } from '../../clusters/netns/bpf-maps.ts';

interface Source {
  repo: 'cilium/cilium';
  path: string;
  /** The commit the file was read at; Cilium's release tags could not be resolved here (see README). */
  commit?: string;
  revision: string;
}

const COMMON_H: Source = {
  repo: 'cilium/cilium',
  path: 'bpf/lib/common.h',
  commit: '00155816a9e3176c3f7e916ef1e3125d0fef45fa',
  revision: 'SPDX header era; lb4_service with flags2, ipv4_revnat_tuple keyed by __sock_cookie',
};
const NAT_H: Source = {
  repo: 'cilium/cilium',
  path: 'bpf/lib/nat.h',
  commit: '00406651df54a3c4f910cc160d1b4baffc528266',
  revision: 'copyright 2019-2020; SNAT_COLLISION_RETRIES 32 (128 with large insn limit)',
};
const NAT_H_NEW: Source = {
  repo: 'cilium/cilium',
  path: 'bpf/lib/nat.h',
  revision: 'v1.16+ (ipv4_nat_target with ifindex): snat_v4_rev_nat_handle_icmp_error, RFC 5508',
};
const NODE_CONFIG_H: Source = { repo: 'cilium/cilium', path: 'bpf/node_config.h', commit: 'e61549c7b8fbbe9ee260197da430e2d493d17d82', revision: 'copyright 2016-2019' };
const BPF_SOCK_C: Source = {
  repo: 'cilium/cilium',
  path: 'bpf/bpf_sock.c',
  commit: '00c22b1c02ea528cfc8df82377c94d28543ffaff',
  revision: 'sock4_* names; later revisions call them cil_sock4_* and reject with EHOSTUNREACH',
};
const IPTABLES_GO_OLD: Source = {
  repo: 'cilium/cilium',
  path: 'pkg/datapath/iptables/iptables.go',
  commit: '00035a78a43866cbe39dc6861fb1b86d6191e8fa',
  revision: 'copyright 2016-2019, before PR 11819 (merged 2020-06-02): installForwardChainRules on the delivery interface only',
};
const IPTABLES_GO_NEW: Source = {
  repo: 'cilium/cilium',
  path: 'pkg/datapath/iptables/iptables.go',
  revision: 'v1.16+ (imports cilium/hive and cilium/statedb): cilium_host rules, cilium_net, lxc+ rules with endpoint routes',
};

/** Byte offsets of the fields we use and the struct size, as read in `source`. */
const LAYOUTS: { struct: string; size: number; fields: Record<string, number>; source: Source; object: 'masquerade' | 'sock-lb' }[] = [
  { struct: 'lb4_key', size: 12, fields: { address: 0, dport: 4, backend_slot: 6, proto: 8, scope: 9 }, source: COMMON_H, object: 'sock-lb' },
  { struct: 'lb4_service', size: 12, fields: { backend_id: 0, count: 4, rev_nat_index: 6, flags: 8, flags2: 9 }, source: COMMON_H, object: 'sock-lb' },
  // later revisions split the trailing bytes as __u16 cluster_id, __u8 zone, __u8 pad: same size, same leading fields
  { struct: 'lb4_backend', size: 12, fields: { address: 0, port: 4, proto: 6, flags: 7 }, source: COMMON_H, object: 'sock-lb' },
  { struct: 'lb4_reverse_nat', size: 6, fields: { address: 0, port: 4 }, source: COMMON_H, object: 'sock-lb' },
  { struct: 'ipv4_revnat_tuple', size: 16, fields: { cookie: 0, address: 8, port: 12, pad: 14 }, source: COMMON_H, object: 'sock-lb' },
  { struct: 'ipv4_revnat_entry', size: 8, fields: { address: 0, port: 4, rev_nat_index: 6 }, source: COMMON_H, object: 'sock-lb' },
  { struct: 'ipv4_ct_tuple', size: 14, fields: { daddr: 0, saddr: 4, dport: 8, sport: 10, nexthdr: 12, flags: 13 }, source: COMMON_H, object: 'masquerade' },
  // nat_entry's second word is host_local in this revision, needs_ct in later ones
  { struct: 'nat_entry', size: 32, fields: { created: 0, pad1: 16, pad2: 24 }, source: NAT_H, object: 'masquerade' },
  { struct: 'ipv4_nat_entry', size: 40, fields: { common: 0 }, source: NAT_H, object: 'masquerade' },
];

/** Map name -> BPF map type number and key/value struct, as in the sources. */
const MAPS: { name: string; type: number; key: string; value: string; source: Source; object: 'masquerade' | 'sock-lb' }[] = [
  // node_config.h: #define SNAT_MAPPING_IPV4 cilium_snat_v4_external; nat.h: LRU hash of ipv4_ct_tuple -> ipv4_nat_entry
  { name: 'cilium_snat_v4_external', type: 9 /* BPF_MAP_TYPE_LRU_HASH */, key: 'ipv4_ct_tuple', value: 'ipv4_nat_entry', source: NODE_CONFIG_H, object: 'masquerade' },
  { name: 'cilium_lb4_reverse_sk', type: 9, key: 'ipv4_revnat_tuple', value: 'ipv4_revnat_entry', source: BPF_SOCK_C, object: 'sock-lb' },
  { name: 'cilium_lb4_services_v2', type: 1 /* BPF_MAP_TYPE_HASH */, key: 'lb4_key', value: 'lb4_service', source: COMMON_H, object: 'sock-lb' },
  { name: 'cilium_lb4_backends_v3', type: 1, key: '', value: 'lb4_backend', source: COMMON_H, object: 'sock-lb' },
  { name: 'cilium_lb4_reverse_nat', type: 1, key: '', value: 'lb4_reverse_nat', source: COMMON_H, object: 'sock-lb' },
];

/** Socket-LB entry points: the attach hook and the function name (later revisions' cil_ prefix). */
const SOCK_PROGRAMS = { cil_sock4_connect: 'cgroup/connect4', cil_sock4_sendmsg: 'cgroup/sendmsg4', cil_sock4_recvmsg: 'cgroup/recvmsg4', cil_sock4_getpeername: 'cgroup/getpeername4' };

/** Constants read in the sources. */
const CONSTANTS = {
  TUPLE_F_OUT: { value: 0, source: COMMON_H },
  TUPLE_F_IN: { value: 1, source: COMMON_H },
  SVC_FLAG_ROUTABLE: { value: 1 << 6, source: COMMON_H }, // "Not a surrogate/ClusterIP entry": we leave it unset
  SNAT_COLLISION_RETRIES: { value: 32, source: NAT_H },
  // NODEPORT_PORT_MIN_NAT = NODEPORT_PORT_MAX + 1 = 32768, NODEPORT_PORT_MAX_NAT = 65535: seen in Cilium's BPF
  // test configs in the index, path not resolved; node_config.h at NODE_CONFIG_H still had 1024..65535
  SNAT_PORT_MIN: { value: 32768, source: NODE_CONFIG_H },
  SNAT_PORT_MAX: { value: 65535, source: NODE_CONFIG_H },
  // nat.h (NAT_H_NEW): reverse SNAT of ICMP errors accepts ICMP_DEST_UNREACH with code <= NR_ICMP_UNREACH (15)
  // and ICMP_TIME_EXCEEDED with ICMP_EXC_TTL / ICMP_EXC_FRAGTIME, found through the quoted packet
  ICMP_ERRORS: { value: { destUnreachMaxCode: 15, timeExceededCodes: [0, 1] }, source: NAT_H_NEW },
};

/** CILIUM_FORWARD rules as `iptables -S` prints them, by version and enable-endpoint-routes. */
const FORWARD_RULES: { version: '1.7' | '1.8'; endpointRoutes: boolean; rules: string[]; source: Source }[] = [
  {
    version: '1.7',
    endpointRoutes: false,
    source: IPTABLES_GO_OLD,
    rules: [
      '-A CILIUM_FORWARD -o cilium_host -m comment --comment "cilium: any->cluster on cilium_host forward accept" -j ACCEPT',
      '-A CILIUM_FORWARD -i cilium_host -m comment --comment "cilium: cluster->any on cilium_host forward accept (nodeport)" -j ACCEPT',
      '-A CILIUM_FORWARD -i lxc+ -m comment --comment "cilium: cluster->any on lxc+ forward accept" -j ACCEPT',
    ],
  },
  {
    // PR 11819's description quotes exactly these three as "existing rules" with endpoint routes
    version: '1.7',
    endpointRoutes: true,
    source: IPTABLES_GO_OLD,
    rules: [
      '-A CILIUM_FORWARD -o lxc+ -m comment --comment "cilium: any->cluster on lxc+ forward accept" -j ACCEPT',
      '-A CILIUM_FORWARD -i lxc+ -m comment --comment "cilium: cluster->any on lxc+ forward accept (nodeport)" -j ACCEPT',
      '-A CILIUM_FORWARD -i lxc+ -m comment --comment "cilium: cluster->any on lxc+ forward accept" -j ACCEPT',
    ],
  },
  {
    version: '1.8',
    endpointRoutes: false,
    source: IPTABLES_GO_NEW,
    rules: [
      '-A CILIUM_FORWARD -o cilium_host -m comment --comment "cilium: any->cluster on cilium_host forward accept" -j ACCEPT',
      '-A CILIUM_FORWARD -i cilium_host -m comment --comment "cilium: cluster->any on cilium_host forward accept (nodeport)" -j ACCEPT',
      '-A CILIUM_FORWARD -i lxc+ -m comment --comment "cilium: cluster->any on lxc+ forward accept" -j ACCEPT',
      '-A CILIUM_FORWARD -i cilium_net -m comment --comment "cilium: cluster->any on cilium_net forward accept (nodeport)" -j ACCEPT',
    ],
  },
  {
    version: '1.8',
    endpointRoutes: true,
    source: IPTABLES_GO_NEW,
    rules: [
      '-A CILIUM_FORWARD -o cilium_host -m comment --comment "cilium: any->cluster on cilium_host forward accept" -j ACCEPT',
      '-A CILIUM_FORWARD -i cilium_host -m comment --comment "cilium: cluster->any on cilium_host forward accept (nodeport)" -j ACCEPT',
      '-A CILIUM_FORWARD -i lxc+ -m comment --comment "cilium: cluster->any on lxc+ forward accept" -j ACCEPT',
      '-A CILIUM_FORWARD -i cilium_net -m comment --comment "cilium: cluster->any on cilium_net forward accept (nodeport)" -j ACCEPT',
      '-A CILIUM_FORWARD -o lxc+ -m comment --comment "cilium: any->cluster on lxc+ forward accept" -j ACCEPT',
      '-A CILIUM_FORWARD -i lxc+ -m comment --comment "cilium: cluster->any on lxc+ forward accept (nodeport)" -j ACCEPT',
    ],
  },
];

interface BtfType {
  id: number;
  kind: string;
  name?: string;
  size?: number;
  type_id?: number;
  nr_elems?: number;
  members?: { name: string; type_id: number; bits_offset: number }[];
  vars?: { type_id: number }[];
}

const tools = (() => {
  try {
    execFileSync('clang', ['--version']);
    execFileSync('bpftool', ['version']);
    return undefined;
  } catch {
    return 'clang or bpftool missing';
  }
})();

async function btf(object: 'masquerade' | 'sock-lb'): Promise<Map<number, BtfType>> {
  const out = execFileSync('bpftool', ['-j', 'btf', 'dump', 'file', await bpfObject(object)], { encoding: 'utf8' });
  return new Map((JSON.parse(out) as { types: BtfType[] }).types.map((t) => [t.id, t]));
}

const struct = (types: Map<number, BtfType>, name: string) => [...types.values()].find((t) => t.kind === 'STRUCT' && t.name === name);
/** Follow typedefs/qualifiers/pointers to the named type. */
function resolve(types: Map<number, BtfType>, id: number | undefined): BtfType | undefined {
  let t = id === undefined ? undefined : types.get(id);
  while (t && ['TYPEDEF', 'CONST', 'VOLATILE', 'PTR'].includes(t.kind)) t = types.get(t.type_id!);
  return t;
}

describe.skipIf(tools)('cilium shape vs cilium/cilium sources', () => {
  it.each(LAYOUTS)('$object: struct $struct has the layout of $source.path', async ({ struct: name, size, fields, object }) => {
    const t = struct(await btf(object), name);
    expect(t, `struct ${name} in ${object}.c`).toBeDefined();
    expect(t!.size).toBe(size);
    const offsets = Object.fromEntries(t!.members!.filter((m) => m.name in fields).map((m) => [m.name, m.bits_offset / 8]));
    expect(offsets).toEqual(fields);
  });

  it.each(MAPS)('$object: map $name is type $type with $key -> $value ($source.path)', async ({ name, type, key, value, object }) => {
    const types = await btf(object);
    const maps = [...types.values()].find((t) => t.kind === 'DATASEC' && t.name === '.maps')!;
    const variable = maps.vars!.map((v) => types.get(v.type_id)!).find((v) => v.name === name);
    expect(variable, `map ${name} in ${object}.c`).toBeDefined();
    const def = types.get(variable!.type_id!)!;
    const member = (n: string) => def.members!.find((m) => m.name === n)!;
    expect(resolve(types, member('type').type_id)?.nr_elems).toBe(type);
    expect(resolve(types, member('value').type_id)?.name).toBe(value);
    if (key) expect(resolve(types, member('key').type_id)?.name).toBe(key);
  });

  it(`sock-lb: one program per socket hook, named as in ${BPF_SOCK_C.path}`, async () => {
    const funcs = [...(await btf('sock-lb')).values()].filter((t) => t.kind === 'FUNC').map((t) => t.name);
    expect(funcs.sort()).toEqual(Object.keys(SOCK_PROGRAMS).sort());
  });
});

describe('cilium shape constants and rules vs cilium/cilium sources', () => {
  it.each(FORWARD_RULES)('CILIUM_FORWARD for Cilium $version, endpoint routes $endpointRoutes ($source.path)', ({ version, endpointRoutes, rules }) => {
    expect(ciliumForwardRules(version, endpointRoutes)).toEqual(rules);
  });

  it(`masquerade.c's constants are the ones read in ${COMMON_H.path} and ${NAT_H.path}`, () => {
    const source = readFileSync(new URL('../../clusters/netns/bpf/masquerade.c', import.meta.url), 'utf8');
    const define = (name: string) => Number(new RegExp(`#define ${name} (\\d+)`).exec(source)?.[1]);
    expect(define('TUPLE_F_OUT')).toBe(CONSTANTS.TUPLE_F_OUT.value);
    expect(define('TUPLE_F_IN')).toBe(CONSTANTS.TUPLE_F_IN.value);
    expect(define('SNAT_COLLISION_RETRIES')).toBe(CONSTANTS.SNAT_COLLISION_RETRIES.value);
    expect(define('NR_ICMP_UNREACH')).toBe(CONSTANTS.ICMP_ERRORS.value.destUnreachMaxCode);
    expect(define('ICMP_EXC_FRAGTIME')).toBe(Math.max(...CONSTANTS.ICMP_ERRORS.value.timeExceededCodes));
  });

  it('SNAT port range and config layout', () => {
    expect(SNAT_PORTS).toEqual({ min: CONSTANTS.SNAT_PORT_MIN.value, max: CONSTANTS.SNAT_PORT_MAX.value });
    // node IP, pod CIDR, native-routing CIDR (NBO), then the port range in host order
    expect(masqueradeConfig('172.18.0.2', '10.244.1.0/24', '10.244.0.0/16').value.join(' ')).toBe(
      'ac 12 00 02 0a f4 01 00 ff ff ff 00 0a f4 00 00 ff ff 00 00 00 80 ff ff',
    );
  });

  it('socket-LB map values: rev_nat_index per frontend, protocol per port, flags 0 for a ClusterIP', () => {
    const updates = socketLbEntries([
      { vip: '10.96.0.10', port: 53, protocol: 'UDP', backends: [{ ip: '10.244.1.5', port: 53 }] },
      { vip: '10.96.0.40', port: 80, protocol: 'TCP', backends: [] },
    ]);
    const line = (u: (typeof updates)[number]) => `${u.map} ${u.key.join(' ')} = ${u.value.join(' ')}`;
    expect(updates.map(line)).toEqual([
      // frontend: count 1, rev_nat_index 1, flags 0 (no SVC_FLAG_ROUTABLE), key proto 17
      'cilium_lb4_services_v2 0a 60 00 0a 00 35 00 00 11 00 00 00 = 00 00 00 00 01 00 01 00 00 00 00 00',
      'cilium_lb4_reverse_nat 01 00 = 0a 60 00 0a 00 35',
      'cilium_lb4_services_v2 0a 60 00 0a 00 35 01 00 11 00 00 00 = 01 00 00 00 00 00 01 00 00 00 00 00',
      'cilium_lb4_backends_v3 01 00 00 00 = 0a f4 01 05 00 35 11 00 00 00 00 00',
      // a Service without backends: count 0 -> connect() fails with EHOSTUNREACH
      'cilium_lb4_services_v2 0a 60 00 28 00 50 00 00 06 00 00 00 = 00 00 00 00 00 00 02 00 00 00 00 00',
      'cilium_lb4_reverse_nat 02 00 = 0a 60 00 28 00 50',
    ]);
    expect(CONSTANTS.SVC_FLAG_ROUTABLE.value).toBe(0x40);
  });
});
