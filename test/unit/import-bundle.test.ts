// netrepro import: the bundle reader (and its errors, each naming the file), the topology, probes and notReplayed
// derived from the fixtures (test/fixtures/capture/, made from kept labs), the restore's commands, and the
// replay's rules in the schema and validation.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { readBundle } from '../../src/cli/import/read-bundle.ts';
import importCommand from '../../src/cli/commands/import.ts';
import { deriveTopology } from '../../src/cli/import/derive-topology.ts';
import { deriveProbes } from '../../src/cli/import/derive-probes.ts';
import { importScenario, scenarioYaml } from '../../src/cli/import/import-scenario.ts';
import {
  conntrackInsert,
  neighbourEntry,
  iptablesRestoreInput,
  routeBatch,
} from '../../src/dataplane/captured-restore.ts';
import { loadScenarioFile, parseScenario } from '../../src/model/load-scenario.ts';
import { fitCaptured } from '../../src/providers/real/common/scenario-fit.ts';
import { localMisfit } from '../../src/providers/real/local/local-support.ts';
import { notReplayedLines } from '../../src/cli/commands/validate.ts';

const FIXTURES = new URL('../fixtures/capture/', import.meta.url).pathname;
const fixture = (name: string) => join(FIXTURES, name);
const scratch = mkdtempSync(join(tmpdir(), 'netrepro-import-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A copy of a fixture to break. */
function copy(name: string): string {
  const dir = mkdtempSync(join(scratch, `${name}-`));
  cpSync(fixture(name), dir, { recursive: true });
  return dir;
}
// biome-ignore lint/suspicious/noExplicitAny: the fixtures' JSON, edited field by field
const editJson = (file: string, edit: (j: any) => void) => {
  const j = JSON.parse(readFileSync(file, 'utf8'));
  edit(j);
  writeFileSync(file, JSON.stringify(j));
};

describe('the bundle reader', () => {
  it('reads a bundle directory: manifest, cluster objects, each node file by its key', async () => {
    const b = await readBundle(fixture('healthy'));
    expect(b.manifest.format).toBe('netrepro-capture/1');
    expect(b.cluster?.pods.map((p) => p.metadata.name)).toEqual(['client', 'web-a', 'web-b']);
    expect(b.nodes.map((n) => n.name)).toEqual(['node-a', 'node-b']);
    expect(b.nodes[0]!.text['iptables-save']).toMatch(/^\*filter$/m);
    expect(Array.isArray(b.nodes[0]!.json['ip-route'])).toBe(true);
    expect(b.nodes[0]!.unreadable.map((u) => u.what)).toEqual(['bpf-cgroup']);
  });

  it('reads the same bundle as a .tar.gz (its folder at the top of the archive)', async () => {
    const tgz = join(scratch, 'healthy.tar.gz');
    execFileSync('tar', ['-czf', tgz, '-C', FIXTURES, 'healthy']);
    const b = await readBundle(tgz);
    expect(b.nodes.map((n) => n.name)).toEqual(['node-a', 'node-b']);
    expect(b.path).toBe(tgz);
  });

  it('refuses a directory without a manifest, naming manifest.json', async () => {
    const dir = copy('healthy');
    rmSync(join(dir, 'manifest.json'));
    await expect(readBundle(dir)).rejects.toThrow(`${join(dir, 'manifest.json')}: not found`);
  });

  it('refuses another format version, naming the field and the version it reads', async () => {
    const dir = copy('healthy');
    editJson(join(dir, 'manifest.json'), (m) => (m.format = 'netrepro-capture/2'));
    const e = await readBundle(dir).catch((x) => x);
    expect(e.message).toBe(
      `${join(dir, 'manifest.json')}: format: "netrepro-capture/2" is not a format this netrepro reads`,
    );
    expect(e.hint).toMatch(/imports netrepro-capture\/1/);
  });

  it('refuses a listed file that cannot be read, naming it and the manifest field', async () => {
    const dir = copy('healthy');
    rmSync(join(dir, 'nodes/node-b/ip-route.json'));
    await expect(readBundle(dir)).rejects.toThrow(
      `${join(dir, 'nodes/node-b/ip-route.json')}: listed in the manifest (nodes[1].files.ip-route) but unreadable (ENOENT)`,
    );
  });

  it('refuses a file that is not JSON, and a cluster file that is not a List', async () => {
    const dir = copy('healthy');
    writeFileSync(join(dir, 'nodes/node-a/sysctls.json'), '{ net.ipv4');
    await expect(readBundle(dir)).rejects.toThrow(`${join(dir, 'nodes/node-a/sysctls.json')}: not valid JSON`);
    const other = copy('healthy');
    writeFileSync(join(other, 'cluster/pods.json'), '{"kind":"Pod"}');
    await expect(readBundle(other)).rejects.toThrow(
      `${join(other, 'cluster/pods.json')}: not a v1 List (no items array)`,
    );
  });

  it('refuses a path outside the bundle, and a bundle that is not there', async () => {
    const dir = copy('healthy');
    editJson(join(dir, 'manifest.json'), (m) => (m.nodes[0].files['ip-link'] = '../../etc/passwd'));
    await expect(readBundle(dir)).rejects.toThrow(
      'nodes[0].files.ip-link: "../../etc/passwd" is not a path inside the bundle',
    );
    await expect(readBundle(join(scratch, 'nothing'))).rejects.toThrow(
      `${join(scratch, 'nothing')}: no such file or directory`,
    );
  });

  it('a captured state too large to carry inline goes to FILE.state/NODE/ beside the scenario, read back when it loads', async () => {
    const dir = copy('healthy');
    const save = join(dir, 'nodes/node-a/iptables-save.txt');
    const rule = (i: number) =>
      `[0:0] -A KUBE-SERVICES -d 10.96.${i >> 8}.${i & 255}/32 -p tcp -m tcp --dport 80 -j KUBE-SVC-X${i}\n`;
    writeFileSync(
      save,
      readFileSync(save, 'utf8').replace('*nat\n', `*nat\n${Array.from({ length: 4000 }, (_, i) => rule(i)).join('')}`),
    );
    const out = mkdtempSync(join(scratch, 'big-'));
    await importCommand(dir, { output: join(out, 'big.yaml') });
    const text = readFileSync(join(out, 'big.yaml'), 'utf8');
    expect(text).toMatch(/^ {6}captured:\n {8}brNetfilter: true\n(.*\n)* {8}state: big\.state\/node-a$/m);
    expect(text).not.toMatch(/KUBE-SVC-X/);
    expect(readFileSync(join(out, 'big.state/node-a/iptables-save.txt'), 'utf8')).toBe(readFileSync(save, 'utf8'));
    // moved together, it loads with the rules and entries read back in
    const moved = mkdtempSync(join(scratch, 'moved-'));
    cpSync(out, moved, { recursive: true });
    const { scenario } = await loadScenarioFile(join(moved, 'big.yaml'), { cached: false });
    expect(scenario.topology.nodes[0]!.captured!.iptables).toMatch(/KUBE-SVC-X3999$/m);
    expect(scenario.topology.nodes[0]!.captured!.conntrack.length).toBeGreaterThan(0);
    // and without its state directory, the load says which file and field
    rmSync(join(moved, 'big.state'), { recursive: true });
    const e = await loadScenarioFile(join(moved, 'big.yaml'), { cached: false }).catch((x) => x);
    expect(e.message).toMatch(
      new RegExp(
        `^${join(moved, 'big.yaml')}:\\d+:1: topology\\.nodes\\[0\\]\\.captured\\.state: cannot read ${join(moved, 'big.state/node-a/iptables-save.txt')} \\(ENOENT\\)`,
      ),
    );
  });

  it('a bundle without cluster objects cannot be imported: said with what to do', async () => {
    const dir = copy('healthy');
    editJson(join(dir, 'manifest.json'), (m) => (m.cluster = null));
    const e = await readBundle(dir)
      .then(deriveTopology)
      .catch((x) => x);
    expect(e.message).toMatch(/manifest.json: cluster is null/);
    expect(e.hint).toMatch(/capture with a kubeconfig/);
  });
});

describe('the topology from a bundle', () => {
  it('nodes with their podCIDR, captured address and state; pods with their ip and programs; Services with endpoints', async () => {
    const { topology } = deriveTopology(await readBundle(fixture('healthy')));
    expect(topology.cni).toBe('bridge');
    expect(topology.kubeProxy).toBe('1.20');
    expect(topology.clusterCIDR).toBe('10.244.0.0/16');
    expect(topology.nodes.map((n) => [n.name, n.podCIDR, n.address])).toEqual([
      ['node-a', '10.244.1.0/24', '172.18.0.2'],
      ['node-b', '10.244.2.0/24', '172.18.0.3'],
    ]);
    const a = topology.nodes[0]!.captured!;
    expect(a.brNetfilter).toBe(true);
    expect(a.iptables).toMatch(/^\[\d+:\d+\] -A KUBE-POSTROUTING .* -j MASQUERADE --random-fully$/m);
    expect(a.routes).toEqual(['default via 172.18.0.1 dev eth0', '10.244.2.0/24 via 172.18.0.3 dev eth0']);
    expect(a.rules).toEqual([]);
    expect(topology.nodes[0]!.sysctls).toMatchObject({
      'net.ipv4.ip_forward': '1',
      'net.bridge.bridge-nf-call-iptables': '1',
    });
    expect(topology.pods).toEqual(
      [
        { name: 'client', node: 'node-a', ip: '10.244.1.2', serve: [] },
        {
          name: 'web-a',
          node: 'node-a',
          ip: '10.244.1.3',
          serve: [{ http: 8080 }],
          ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
        },
        {
          name: 'web-b',
          node: 'node-b',
          ip: '10.244.2.2',
          serve: [{ http: 8080 }],
          ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
        },
      ].map((p) => (p.serve.length ? p : (({ serve, ...rest }) => rest)(p))),
    );
    expect(topology.services?.map((s) => [s.name, s.clusterIP, s.endpoints])).toEqual([
      ['web', '10.96.0.20', ['web-b']],
      ['local', '10.96.0.30', ['web-a']],
    ]);
  });

  it('br_netfilter off, the FORWARD policy and the deleted MASQUERADE come through as captured', async () => {
    const br = deriveTopology(await readBundle(fixture('br-netfilter-off'))).topology;
    expect(br.nodes.map((n) => n.captured!.brNetfilter)).toEqual([false, true]);
    const fwd = deriveTopology(await readBundle(fixture('forward-drop'))).topology;
    for (const n of fwd.nodes) expect(n.captured!.iptables).toMatch(/^:FORWARD DROP \[\d+:\d+\]$/m);
    const masq = deriveTopology(await readBundle(fixture('no-masquerade'))).topology;
    expect(masq.nodes[0]!.captured!.iptables).not.toMatch(/KUBE-POSTROUTING .*MASQUERADE/);
    expect(masq.nodes[1]!.captured!.iptables).toMatch(/KUBE-POSTROUTING .*MASQUERADE/);
  });

  it('a pod the capture no longer has is not a pod, its stale entry is kept, a Service without endpoints has none', async () => {
    const { topology } = deriveTopology(await readBundle(fixture('udp-stale-conntrack')));
    expect(topology.pods.map((p) => [p.name, p.ip])).toEqual([
      ['client', '10.244.1.2'],
      ['dns-new', '10.244.1.4'],
    ]);
    expect(topology.services?.[0]).toMatchObject({ name: 'dns', namespace: 'kube-system', endpoints: [] });
    expect((topology.nodes[0]!.captured!.conntrack ?? []).filter((l) => l.includes('sport=40000'))).toEqual([
      'ipv4 2 udp 17 26 src=10.244.1.2 dst=10.96.0.10 sport=40000 dport=53 src=10.244.1.3 dst=10.244.1.2 sport=53 dport=40000 mark=0 use=1',
    ]);
    // the gone pod's neighbour stays, so the node still sends to its last MAC; the client's is the lab's own
    expect(topology.nodes[0]!.captured!.neighbours).toEqual([
      '10.244.1.3 lladdr 86:c4:1c:72:5f:af dev cni0 nud reachable',
    ]);
  });
});

describe('the probes of an imported scenario', () => {
  it('every pod to every Service port, each pod to a serving pod on every other node, all expected ok', async () => {
    const { probes, expect: expected } = deriveProbes(deriveTopology(await readBundle(fixture('healthy'))).topology);
    expect(probes.map((p) => p.id)).toEqual([
      'client-web-80',
      'client-local-80',
      'client-web-b',
      'web-a-web-80',
      'web-a-local-80',
      'web-a-web-b',
      'web-b-web-80',
      'web-b-local-80',
      'web-b-web-a',
    ]);
    expect(probes[2]).toEqual({ id: 'client-web-b', from: 'client', http: { to: 'pod/web-b', port: 8080 } });
    expect(expected['client-web-80']).toBe('ok');
    expect(expected['client-web-b']).toEqual({ outcome: 'ok', servedBy: 'web-b' });
  });

  it('a bundle with nothing to probe is refused, saying how to capture one that has', async () => {
    const bundle = await readBundle(fixture('udp-stale-conntrack'));
    const node = bundle.nodes[0]!;
    const text: Record<string, string> = { ...node.text };
    delete text.conntrack;
    const without = { ...bundle, nodes: [{ ...node, text, conntrack: { captured: false } }] };
    expect(() => importScenario(without)).toThrow(
      /nothing to probe: no Service with endpoints, no pods on two nodes, and no conntrack entries \(captured without --conntrack\)/,
    );
  });

  it('each captured UDP flow from a pod to a Service again from its source port (a stale entry shows only to its socket)', async () => {
    const { probes } = deriveProbes(deriveTopology(await readBundle(fixture('udp-stale-conntrack'))).topology);
    expect(probes).toEqual([
      {
        id: 'client-dns-from-40000',
        from: 'client',
        dns: { server: 'svc/dns', name: 'dns.kube-system.svc.cluster.local', sourcePort: 40000 },
      },
      {
        id: 'client-dns-from-53800',
        from: 'client',
        dns: { server: 'svc/dns', name: 'dns.kube-system.svc.cluster.local', sourcePort: 53800 },
      },
    ]);
  });
});

describe('what is not replayed', () => {
  it('names what the capture could not read and the sysctls the lab does not set', async () => {
    const { topology } = deriveTopology(await readBundle(fixture('healthy')));
    expect(topology.notReplayed).toContainEqual({
      node: 'node-a',
      what: 'bpf-cgroup (not captured)',
      why: "cgroup v2 isn't mounted",
    });
    expect(topology.notReplayed?.find((x) => x.what.includes('nf_conntrack_max'))?.why).toMatch(/host-wide/);
  });

  it('a Cilium datapath, an nft-only ruleset, IPv6, unknown devices and their routes, a host-network pod', async () => {
    const dir = copy('healthy');
    const node = join(dir, 'nodes/node-a');
    editJson(join(node, 'ip-link.json'), (links) => {
      links.push({ ifname: 'cilium_host', link_type: 'ether', linkinfo: { info_kind: 'veth' } });
      links.push({ ifname: 'tunl0', link_type: 'ipip', linkinfo: { info_kind: 'ipip' } });
    });
    editJson(join(node, 'ip-addr.json'), (addrs) =>
      addrs.push({
        ifname: 'eth0',
        addr_info: [{ family: 'inet6', local: 'fc00::2', prefixlen: 64, scope: 'global' }],
      }),
    );
    editJson(join(node, 'ip-route.json'), (routes) =>
      routes.push({ dst: '10.0.0.0/8', dev: 'tunl0', protocol: 'bird' }),
    );
    editJson(join(node, 'bpf-net.json'), (net) =>
      net[0].tc.push({ devname: 'eth0', ifindex: 2, kind: 'clsact/ingress', name: 'bpf_netdev_eth0', id: 7 }),
    );
    writeFileSync(join(node, 'nft-ruleset.txt'), 'table inet cilium {}\n');
    editJson(join(dir, 'manifest.json'), (m) => (m.nodes[0].files['nft-ruleset'] = 'nodes/node-a/nft-ruleset.txt'));
    editJson(join(dir, 'cluster/pods.json'), (pods) =>
      pods.items.push({
        metadata: { name: 'kube-proxy-abcde', namespace: 'kube-system' },
        spec: { nodeName: 'node-a', hostNetwork: true },
        status: { phase: 'Running', podIP: '172.18.0.2' },
      }),
    );
    const { topology } = deriveTopology(await readBundle(dir));
    const what = topology.notReplayed!.map((x) => `${x.node ?? '-'}: ${x.what}`);
    expect(topology.cni).toBe('cilium');
    expect(what).toEqual(
      expect.arrayContaining([
        '-: the Cilium datapath (its BPF programs and maps)',
        'node-a: devices cni0 (bridge), tunl0 (ipip)',
        'node-a: IPv6 addresses fc00::2 on eth0',
        'node-a: nftables tables iptables-save does not show (nft-ruleset.txt)',
        'node-a: BPF programs on devices (eth0: bpf_netdev_eth0)',
        'node-a: routes 10.0.0.0/8 dev tunl0 proto bird',
        'node-a: host-network pods kube-system/kube-proxy-abcde',
      ]),
    );
    expect(topology.nodes[0]!.captured!.routes).not.toContain('10.0.0.0/8 dev tunl0 proto bird');
  });

  it('flannel from its VTEP; validate prints every entry under the file', async () => {
    const dir = copy('healthy');
    editJson(join(dir, 'nodes/node-b/ip-link.json'), (links) =>
      links.push({ ifname: 'flannel.1', link_type: 'ether', linkinfo: { info_kind: 'vxlan' } }),
    );
    // sysctl prints flannel.1's settings with a slash: the scenario names the device as it is
    editJson(join(dir, 'nodes/node-b/sysctls.json'), (sysctls) => {
      sysctls['net.ipv4.conf.flannel/1.rp_filter'] = '0';
    });
    const { topology } = deriveTopology(await readBundle(dir));
    expect(topology.cni).toBe('flannel');
    expect(topology.notReplayed!.some((x) => x.what.includes('flannel'))).toBe(false);
    expect(topology.nodes[1]!.sysctls).toMatchObject({ 'net.ipv4.conf.flannel.1.rp_filter': '0' });
    expect(
      notReplayedLines('r.yaml', [
        { node: 'node-a', what: 'devices tunl0 (ipip)', why: 'not made' },
        { what: 'x', why: 'y' },
      ]),
    ).toBe(
      'r.yaml: not replayed (2): the lab runs without it, so the replay may differ from the incident there\n  - node node-a: devices tunl0 (ipip): not made\n  - x: y\n',
    );
    expect(notReplayedLines('r.yaml', [])).toBe('');
  });

  it('a node address outside the lab network is left to the lab and said; a node the bundle did not capture too', async () => {
    const dir = copy('healthy');
    editJson(join(dir, 'cluster/nodes.json'), (nodes) => {
      nodes.items[1].status.addresses[0].address = '10.0.0.12';
      nodes.items.push({ metadata: { name: 'node-c' }, spec: { podCIDR: '10.244.3.0/24' }, status: { addresses: [] } });
    });
    const { topology } = deriveTopology(await readBundle(dir));
    expect(topology.nodes.map((n) => n.address)).toEqual(['172.18.0.2', undefined]);
    expect(topology.notReplayed!.map((x) => x.what)).toEqual(
      expect.arrayContaining(["the node's address 10.0.0.12", 'node node-c and its pods']),
    );
  });
});

describe('what the restore runs', () => {
  it('iptables: counters zeroed, the lab trace rules left out, raw and mangle kept apart for --noflush', () => {
    const save = readFileSync(fixture('forward-drop/nodes/node-a/iptables-save.txt'), 'utf8');
    const { flushed, kept } = iptablesRestoreInput(save);
    expect(flushed).toMatch(/^\*filter$/m);
    expect(flushed).toMatch(/^:FORWARD DROP \[0:0\]$/m);
    expect(flushed).not.toMatch(/^\*(raw|mangle)$/m);
    expect(kept).toMatch(/^\*raw$/m);
    expect(`${flushed}${kept}`).not.toMatch(/netrepro-trace|\[[1-9]\d*:\d+\]|^#/m);
    expect(`${flushed}${kept}`.split('\n').filter((l) => l.startsWith('[0:0] -A')).length).toBeGreaterThan(20);
    // raw and mangle keep only the built-in chains with a rule (or a policy of their own): the lab's trace rules are gone
    expect(kept).toBe('*mangle\nCOMMIT\n*raw\nCOMMIT\n');
    expect(
      iptablesRestoreInput(
        '*raw\n:PREROUTING ACCEPT [5:300]\n:OUTPUT DROP [0:0]\n[1:60] -A PREROUTING -j CT --notrack\nCOMMIT\n',
      ).kept,
    ).toBe('*raw\n:PREROUTING ACCEPT [0:0]\n:OUTPUT DROP [0:0]\n[0:0] -A PREROUTING -j CT --notrack\nCOMMIT\n');
  });

  it('routes replace the lab own; rules are added', () => {
    expect(
      routeBatch({
        iptables: 'x',
        brNetfilter: true,
        routes: ['default via 172.18.0.1 dev eth0'],
        rules: ['priority 100 from 10.0.0.0/8 table 7'],
        conntrack: [],
        neighbours: ['10.244.1.3 lladdr 46:c2:14:5a:cb:77 dev cni0 nud stale'],
      }),
    ).toEqual([
      'route flush table main proto boot',
      'route add default via 172.18.0.1 dev eth0',
      'rule add priority 100 from 10.0.0.0/8 table 7',
      'neigh replace 10.244.1.3 lladdr 46:c2:14:5a:cb:77 dev cni0 nud stale',
    ]);
  });

  it('a neighbour with a MAC is restored as the node last knew it (confirmed or not); one without a MAC is not', () => {
    const at = (state: string[], lladdr: string | undefined = '46:c2:14:5a:cb:77') =>
      neighbourEntry({ dst: '10.244.1.3', dev: 'cni0', lladdr, state });
    expect(at(['REACHABLE'])).toBe('10.244.1.3 lladdr 46:c2:14:5a:cb:77 dev cni0 nud reachable');
    expect(['STALE', 'DELAY', 'PROBE'].map((s) => at([s]))).toEqual(
      Array(3).fill('10.244.1.3 lladdr 46:c2:14:5a:cb:77 dev cni0 nud stale'),
    );
    expect(at(['PERMANENT'])).toMatch(/nud permanent$/);
    expect(at(['NOARP'])).toMatch(/nud noarp$/);
    expect(at(['FAILED'], undefined)).toBeUndefined();
    expect(at(['INCOMPLETE'], undefined)).toBeUndefined();
    expect(at(['REACHABLE'], 'not-a-mac')).toBeUndefined();
    expect(
      neighbourEntry({ dst: 'fe80::1', dev: 'cni0', lladdr: '46:c2:14:5a:cb:77', state: ['STALE'] }),
    ).toBeUndefined();
  });

  it('a DNATed UDP entry: the original inverse as reply, the NAT given, a lifetime that outlives the start', () => {
    const line =
      'ipv4 2 udp 17 27 src=10.244.1.2 dst=10.96.0.10 sport=40000 dport=53 src=10.244.1.3 dst=10.244.1.2 sport=53 dport=40000 mark=0 use=1';
    expect(conntrackInsert(line)).toEqual({
      argv: [
        'conntrack',
        '-I',
        '-p',
        'udp',
        '-s',
        '10.244.1.2',
        '-d',
        '10.96.0.10',
        '--sport',
        '40000',
        '--dport',
        '53',
        '-r',
        '10.96.0.10',
        '-q',
        '10.244.1.2',
        '--reply-port-src',
        '53',
        '--reply-port-dst',
        '40000',
        '-t',
        '60',
        '-u',
        'SEEN_REPLY',
        '--dst-nat',
        '10.244.1.3:53',
      ],
    });
  });

  it('a TCP entry keeps its state and status; an ICMP or IPv6 one says why it is not recreated', () => {
    const tcp =
      'ipv4 2 tcp 6 86399 ESTABLISHED src=10.244.1.2 dst=10.244.2.2 sport=5000 dport=8080 src=10.244.2.2 dst=10.244.1.2 sport=8080 dport=5000 [ASSURED] mark=0 use=1';
    expect(conntrackInsert(tcp)).toMatchObject({
      argv: expect.arrayContaining(['--state', 'ESTABLISHED', '-u', 'SEEN_REPLY,ASSURED', '-t', '86399']),
    });
    expect((conntrackInsert(tcp) as { argv: string[] }).argv).not.toContain('--dst-nat');
    expect(
      conntrackInsert(
        'ipv4 2 icmp 1 29 src=10.244.1.2 dst=10.244.2.2 type=8 code=0 id=1 [UNREPLIED] src=10.244.2.2 dst=10.244.1.2 type=0 code=0 id=1 mark=0 use=1',
      ),
    ).toEqual({
      why: 'an entry of protocol icmp: only TCP and UDP entries are recreated',
    });
    expect(
      conntrackInsert(
        'ipv6 10 udp 17 20 src=fc00::1 dst=fc00::2 sport=1 dport=2 src=fc00::2 dst=fc00::1 sport=2 dport=1',
      ),
    ).toEqual({
      why: 'an IPv6 entry (the lab is IPv4 only)',
    });
  });
});

describe('a replay scenario', () => {
  const imported = async (name: string) => importScenario(await readBundle(fixture(name)), `replay-${name}`);
  const parse = (s: unknown) => () => parseScenario(stringify(s), 'replay.yaml');

  it('what import writes validates as it is, for every fixture', async () => {
    for (const name of ['healthy', 'forward-drop', 'br-netfilter-off', 'no-masquerade', 'udp-stale-conntrack']) {
      const s = parseScenario(scenarioYaml(await imported(name)), `${name}.yaml`);
      expect(s.purpose).toBe('replay');
      expect(s.fixes).toEqual([]);
      expect(s.fault).toEqual({ steps: [], expect: {}, checks: [] });
    }
  });

  it('purpose replay and a captured state on every node go together; a replay has no fault phase', async () => {
    const s = await imported('healthy');
    expect(parse({ ...s, purpose: 'reproduce' })).toThrow(
      /topology.nodes\[0\].captured: a captured state is the incident itself, not a healthy baseline: it needs `purpose: replay`/,
    );
    const { captured: _, ...bare } = s.topology.nodes[1]!;
    expect(parse({ ...s, topology: { ...s.topology, nodes: [s.topology.nodes[0], bare] } })).toThrow(
      /topology.nodes\[1\]: a replay restores a captured state on every node/,
    );
    expect(
      parse({
        ...s,
        fault: {
          steps: [{ 'forward-policy': { node: 'node-a', policy: 'DROP' } }],
          expect: { 'client-web-80': 'timeout' },
        },
      }),
    ).toThrow(/fault: a replay has no fault phase/);
  });

  it('the captured rules are inline or in a state directory inside the scenario folder, one of them', async () => {
    const s = await imported('healthy');
    const node = (captured: object) => ({
      ...s,
      topology: { ...s.topology, nodes: [{ ...s.topology.nodes[0], captured }, s.topology.nodes[1]] },
    });
    const { iptables, ...rest } = s.topology.nodes[0]!.captured!;
    expect(parse(node({ ...rest }))).toThrow(
      /captured.iptables: the captured rules are inline \(`iptables`\) or in a state directory \(`state`\), one of them/,
    );
    expect(parse(node({ ...rest, iptables, state: 'x.state/node-a' }))).toThrow(/one of them/);
    expect(parse(node({ ...rest, state: '../elsewhere/node-a' }))).toThrow(
      /captured.state: a directory relative to the scenario file, inside its folder/,
    );
  });

  it('a fix must assert something the replayed baseline does not', async () => {
    const s = await imported('forward-drop');
    const fix = {
      name: 'accept',
      steps: [{ 'forward-policy': { node: 'node-a', policy: 'ACCEPT' } }],
      expect: { 'client-web-80': 'ok' },
    };
    expect(parse({ ...s, fixes: [fix] })).toThrow(/fix accept asserts nothing the baseline does not/);
    expect(
      parse({ ...s, baseline: { expect: { ...s.baseline.expect, 'client-web-80': 'timeout' } }, fixes: [fix] })(),
    ).toBeTruthy();
  });

  it("fixed addresses: a pod ip inside its node's podCIDR, all of a node's pods or none; a node address on the lab's network", async () => {
    const s = await imported('healthy');
    const pods = s.topology.pods.map((p) => ({ ...p }));
    pods[0]!.ip = '10.244.2.9';
    expect(parse({ ...s, topology: { ...s.topology, pods } })).toThrow(
      /topology.pods\[0\].ip: outside node node-a's podCIDR/,
    );
    delete pods[0]!.ip;
    expect(parse({ ...s, topology: { ...s.topology, pods } })).toThrow(
      /pod client has no ip while other pods of node node-a have one/,
    );
    const nodes = s.topology.nodes.map((n) => ({ ...n }));
    nodes[1]!.address = '172.18.0.2';
    expect(parse({ ...s, topology: { ...s.topology, nodes } })).toThrow(
      /topology.nodes\[1\].address: node node-a has this address/,
    );
    nodes[1]!.address = '172.18.0.1';
    expect(parse({ ...s, topology: { ...s.topology, nodes } })).toThrow(/the lab's own: .1 is the nodes' gateway/);
  });

  it('real providers refuse a captured topology up front, with the reason', async () => {
    const s = parseScenario(scenarioYaml(await imported('healthy')), 'healthy.yaml');
    expect(fitCaptured(s.topology)?.reason).toMatch(/node node-a holds a captured state \(netrepro import\)/);
    expect(localMisfit(s.topology, { cni: undefined })?.hint).toBe('run it with --provider netns');
  });
});
