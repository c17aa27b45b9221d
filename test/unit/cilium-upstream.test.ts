// Our cilium shape against Cilium's own sources. The facts below were read by hand in cilium/cilium
// at the release tags named with each group and written down in our words: struct layouts as byte
// offsets, map names and types, program names, CILIUM_FORWARD rule texts. The tests compile our C
// (src/providers/netns/bpf/*.c) and compare its BTF with these facts, and our rule writer with the rule
// texts, so a change on either side that breaks the model shows up here. No upstream code is copied.
//
// cilium/cilium itself is larger than the fetch tool's limit; its forks carry the release tags. Each
// tag below was read in the fork named with it, and its commit (`git rev-parse TAG^{commit}`) is the
// same in every other fork that holds the tag (listed), so the content is the tag's, not a fork's.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bpfObject } from '../../src/providers/netns/bpf-build.ts';
import { ciliumForwardRules } from '../../src/dataplane/cilium-forward-rules.ts';
import { masqueradeConfig, SNAT_PORTS, socketLbEntries } from '../../src/providers/netns/bpf-maps.ts';

interface Source {
  repo: 'cilium/cilium';
  tag: string;
  /** The tag's commit. */
  commit: string;
  path: string;
  /** Forks the tag was read in, the first one for the content. */
  readIn: string[];
}

/** A file of cilium/cilium at a release tag, read in the forks named. */
const atTag =
  (tag: string, commit: string, readIn: string[]) =>
  (path: string): Source => ({ repo: 'cilium/cilium', tag, commit, path, readIn });
const V1_18_2 = atTag('v1.18.2', '5bd307a8f6fbf3489005944ded2ed085fc642cc2', ['Br1an67/cilium', 'sh1un/cilium']);
const FIVE_FORKS = [
  'Br1an67/cilium',
  'madhusudancs/cilium',
  'sh1un/cilium',
  'AritraDey-Dev/cilium',
  'go-faster/cilium',
];
// struct lb4_key, lb4_service, lb4_backend, lb4_reverse_nat, ipv4_revnat_tuple, ipv4_revnat_entry, ipv4_ct_tuple; TUPLE_F_*; SVC_FLAG_*
// (the same structs, byte for byte, at v1.19.1, where lb4_* moved to bpf/lib/lb.h and the revnat structs to bpf/lib/sock.h)
const COMMON_H = V1_18_2('bpf/lib/common.h');
// cilium_lb4_services_v2, cilium_lb4_backends_v3, cilium_lb4_reverse_nat: BPF_MAP_TYPE_HASH
const LB_H = V1_18_2('bpf/lib/lb.h');
// struct nat_entry (created, needs_ct, pad1, pad2), ipv4_nat_entry; cilium_snat_v4_external (LRU, ipv4_ct_tuple -> ipv4_nat_entry);
// reverse SNAT of ICMP errors (RFC 5508): ICMP_DEST_UNREACH with code <= NR_ICMP_UNREACH, ICMP_TIME_EXCEEDED with ICMP_EXC_TTL / ICMP_EXC_FRAGTIME
const NAT_H = V1_18_2('bpf/lib/nat.h');
// SNAT_COLLISION_RETRIES 32; NODEPORT_PORT_MIN_NAT (NODEPORT_PORT_MAX + 1 = 32768), NODEPORT_PORT_MAX_NAT 65535
// (v1.16 and before: 43835, and SNAT_COLLISION_RETRIES in nat.h)
const NODE_CONFIG_H = V1_18_2('bpf/node_config.h');
// cil_sock4_connect/sendmsg/recvmsg/getpeername on cgroup/{connect4,sendmsg4,recvmsg4,getpeername4}; -EHOSTUNREACH for a
// service without backends; cilium_lb4_reverse_sk (LRU, ipv4_revnat_tuple -> ipv4_revnat_entry)
const BPF_SOCK_C = V1_18_2('bpf/bpf_sock.c');
// installForwardChainRules before PR 11819: three rules on the delivery interface (v1.6.2 - v1.7.4; v1.6.0/v1.6.1 had two)
const IPTABLES_GO_OLD = atTag(
  'v1.7.0',
  'adeaf8c04371e7f1ab17379578a0b74814793587',
  FIVE_FORKS,
)('pkg/datapath/iptables/iptables.go');
// installForwardChainRules after PR 11819 (backported to v1.7.5): cilium_host rules, cilium_net, and with endpoint routes the
// lxc+ pair; the same rules at v1.12.0, v1.16.0 and v1.19.1 (installForwardChainRulesIpX)
const IPTABLES_GO_NEW = atTag(
  'v1.8.0',
  'f455c7e6921d8907e6a6016411fc85e57919e3d1',
  FIVE_FORKS,
)('pkg/datapath/iptables/iptables.go');
/** The four 1.8 rules without endpoint routes; with them, the lxc+ pair follows. */
const V1_8_RULES = [
  '-A CILIUM_FORWARD -o cilium_host -m comment --comment "cilium: any->cluster on cilium_host forward accept" -j ACCEPT',
  '-A CILIUM_FORWARD -i cilium_host -m comment --comment "cilium: cluster->any on cilium_host forward accept (nodeport)" -j ACCEPT',
  '-A CILIUM_FORWARD -i lxc+ -m comment --comment "cilium: cluster->any on lxc+ forward accept" -j ACCEPT',
  '-A CILIUM_FORWARD -i cilium_net -m comment --comment "cilium: cluster->any on cilium_net forward accept (nodeport)" -j ACCEPT',
];

/** Byte offsets of the fields we use and the struct size, as read in `source`. */
const LAYOUTS: {
  struct: string;
  size: number;
  fields: Record<string, number>;
  source: Source;
  object: 'masquerade' | 'sock-lb';
}[] = [
  {
    struct: 'lb4_key',
    size: 12,
    fields: { address: 0, dport: 4, backend_slot: 6, proto: 8, scope: 9 },
    source: COMMON_H,
    object: 'sock-lb',
  },
  {
    struct: 'lb4_service',
    size: 12,
    fields: { backend_id: 0, count: 4, rev_nat_index: 6, flags: 8, flags2: 9 },
    source: COMMON_H,
    object: 'sock-lb',
  },
  // its trailing bytes are __u16 cluster_id, __u8 zone, __u8 pad at the tag: our model writes them 0
  {
    struct: 'lb4_backend',
    size: 12,
    fields: { address: 0, port: 4, proto: 6, flags: 7 },
    source: COMMON_H,
    object: 'sock-lb',
  },
  { struct: 'lb4_reverse_nat', size: 6, fields: { address: 0, port: 4 }, source: COMMON_H, object: 'sock-lb' },
  {
    struct: 'ipv4_revnat_tuple',
    size: 16,
    fields: { cookie: 0, address: 8, port: 12, pad: 14 },
    source: COMMON_H,
    object: 'sock-lb',
  },
  {
    struct: 'ipv4_revnat_entry',
    size: 8,
    fields: { address: 0, port: 4, rev_nat_index: 6 },
    source: COMMON_H,
    object: 'sock-lb',
  },
  {
    struct: 'ipv4_ct_tuple',
    size: 14,
    fields: { daddr: 0, saddr: 4, dport: 8, sport: 10, nexthdr: 12, flags: 13 },
    source: COMMON_H,
    object: 'masquerade',
  },
  // nat_entry's second word (needs_ct) is not used by our model
  { struct: 'nat_entry', size: 32, fields: { created: 0, pad1: 16, pad2: 24 }, source: NAT_H, object: 'masquerade' },
  { struct: 'ipv4_nat_entry', size: 40, fields: { common: 0 }, source: NAT_H, object: 'masquerade' },
];

/** Map name -> BPF map type number and key/value struct, as in the sources. */
const MAPS: {
  name: string;
  type: number;
  key: string;
  value: string;
  source: Source;
  object: 'masquerade' | 'sock-lb';
}[] = [
  {
    name: 'cilium_snat_v4_external',
    type: 9 /* BPF_MAP_TYPE_LRU_HASH */,
    key: 'ipv4_ct_tuple',
    value: 'ipv4_nat_entry',
    source: NAT_H,
    object: 'masquerade',
  },
  {
    name: 'cilium_lb4_reverse_sk',
    type: 9,
    key: 'ipv4_revnat_tuple',
    value: 'ipv4_revnat_entry',
    source: BPF_SOCK_C,
    object: 'sock-lb',
  },
  {
    name: 'cilium_lb4_services_v2',
    type: 1 /* BPF_MAP_TYPE_HASH */,
    key: 'lb4_key',
    value: 'lb4_service',
    source: LB_H,
    object: 'sock-lb',
  },
  { name: 'cilium_lb4_backends_v3', type: 1, key: '', value: 'lb4_backend', source: LB_H, object: 'sock-lb' },
  { name: 'cilium_lb4_reverse_nat', type: 1, key: '', value: 'lb4_reverse_nat', source: LB_H, object: 'sock-lb' },
];

/** Socket-LB entry points: the attach hook and the function name, as in BPF_SOCK_C. */
const SOCK_PROGRAMS = {
  cil_sock4_connect: 'cgroup/connect4',
  cil_sock4_sendmsg: 'cgroup/sendmsg4',
  cil_sock4_recvmsg: 'cgroup/recvmsg4',
  cil_sock4_getpeername: 'cgroup/getpeername4',
};

/** Constants read in the sources. */
const CONSTANTS = {
  TUPLE_F_OUT: { value: 0, source: COMMON_H },
  TUPLE_F_IN: { value: 1, source: COMMON_H },
  SVC_FLAG_ROUTABLE: { value: 1 << 6, source: COMMON_H }, // "Not a surrogate/ClusterIP entry": we leave it unset
  SNAT_COLLISION_RETRIES: { value: 32, source: NODE_CONFIG_H },
  SNAT_PORT_MIN: { value: 32768, source: NODE_CONFIG_H },
  SNAT_PORT_MAX: { value: 65535, source: NODE_CONFIG_H },
  // reverse SNAT of ICMP errors: NR_ICMP_UNREACH (15) and ICMP_EXC_TTL / ICMP_EXC_FRAGTIME (0, 1) are the kernel's values
  ICMP_ERRORS: { value: { destUnreachMaxCode: 15, timeExceededCodes: [0, 1] }, source: NAT_H },
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
    rules: [...V1_8_RULES],
  },
  {
    version: '1.8',
    endpointRoutes: true,
    source: IPTABLES_GO_NEW,
    rules: [
      ...V1_8_RULES,
      // with endpoint routes, the lxc+ pair too
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

const struct = (types: Map<number, BtfType>, name: string) =>
  [...types.values()].find((t) => t.kind === 'STRUCT' && t.name === name);
/** Follow typedefs/qualifiers/pointers to the named type. */
function resolve(types: Map<number, BtfType>, id: number | undefined): BtfType | undefined {
  let t = id === undefined ? undefined : types.get(id);
  while (t && ['TYPEDEF', 'CONST', 'VOLATILE', 'PTR'].includes(t.kind)) t = types.get(t.type_id!);
  return t;
}

describe.skipIf(tools)('cilium shape vs cilium/cilium sources', () => {
  it.each(LAYOUTS)(
    '$object: struct $struct has the layout of $source.path at $source.tag',
    async ({ struct: name, size, fields, object }) => {
      const t = struct(await btf(object), name);
      expect(t, `struct ${name} in ${object}.c`).toBeDefined();
      expect(t!.size).toBe(size);
      const offsets = Object.fromEntries(
        t!.members!.filter((m) => m.name in fields).map((m) => [m.name, m.bits_offset / 8]),
      );
      expect(offsets).toEqual(fields);
    },
  );

  it.each(MAPS)(
    '$object: map $name is type $type with $key -> $value ($source.path at $source.tag)',
    async ({ name, type, key, value, object }) => {
      const types = await btf(object);
      const maps = [...types.values()].find((t) => t.kind === 'DATASEC' && t.name === '.maps')!;
      const variable = maps.vars!.map((v) => types.get(v.type_id)!).find((v) => v.name === name);
      expect(variable, `map ${name} in ${object}.c`).toBeDefined();
      const def = types.get(variable!.type_id!)!;
      const member = (n: string) => def.members!.find((m) => m.name === n)!;
      expect(resolve(types, member('type').type_id)?.nr_elems).toBe(type);
      expect(resolve(types, member('value').type_id)?.name).toBe(value);
      if (key) expect(resolve(types, member('key').type_id)?.name).toBe(key);
    },
  );

  it(`sock-lb: one program per socket hook, named as in ${BPF_SOCK_C.path} at ${BPF_SOCK_C.tag}`, async () => {
    const funcs = [...(await btf('sock-lb')).values()].filter((t) => t.kind === 'FUNC').map((t) => t.name);
    expect(funcs.sort()).toEqual(Object.keys(SOCK_PROGRAMS).sort());
  });
});

describe('cilium shape constants and rules vs cilium/cilium sources', () => {
  it.each(FORWARD_RULES)(
    'CILIUM_FORWARD for Cilium $version, endpoint routes $endpointRoutes ($source.repo $source.tag $source.path)',
    ({ version, endpointRoutes, rules }) => {
      expect(ciliumForwardRules(version, endpointRoutes)).toEqual(rules);
    },
  );

  it(`masquerade.c's constants are the ones read in ${COMMON_H.path}, ${NAT_H.path} and ${NODE_CONFIG_H.path} at ${NAT_H.tag}`, () => {
    const source = readFileSync(new URL('../../src/providers/netns/bpf/masquerade.c', import.meta.url), 'utf8');
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
