// `netrepro capture` without a node: the exact commands it runs (and that none of them can change anything), what
// their outcomes become (files, the manifest, unreadable items with the command and why), the one-script form
// run by a real sh, the kubectl debug command, redaction, the bundle on disk, and `run --stop-after`'s plan.
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCommand } from '../../src/contract/command.ts';
import { labClusterObjects } from '../../src/contract/lab-cluster-objects.ts';
import type { Target } from '../../src/contract/provider.ts';
import { stopAfterPlan } from '../../src/engine/run/run-scenario.ts';
import { parseScenario } from '../../src/model/load-scenario.ts';
import { BUNDLE_FORMAT, type Bundle } from '../../src/observe/capture/bundle-manifest.ts';
import { bundleFiles, captureBundle } from '../../src/observe/capture/capture-bundle.ts';
import {
  CONNTRACK_DEFAULT_LINES,
  type CaptureCommand,
  MODULES_COMMAND,
  nodeCommands,
} from '../../src/observe/capture/capture-commands.ts';
import { givenClusterObjects, readClusterObjects } from '../../src/observe/capture/cluster-objects.ts';
import {
  brNetfilter,
  conntrackTable,
  nodeCapture,
  parseIptablesVersion,
  parseSysctls,
  sysctlName,
  tablesBeyondIptables,
} from '../../src/observe/capture/collect-node.ts';
import { type CommandOutcome, TargetReader } from '../../src/observe/capture/node-reader.ts';
import { redactBundle, redactionMapping, redactionOf } from '../../src/observe/capture/redact.ts';
import { nodeScript, parseScriptOutput, ScriptReader } from '../../src/observe/capture/script-reader.ts';
import { defaultBundleName, mappingPath, writeBundle } from '../../src/observe/capture/write-bundle.ts';
import {
  debugPodName,
  deleteDebugPodArgv,
  kubectlDebugArgv,
  podLogsArgv,
  podPhaseArgv,
} from '../../src/providers/kubectl-debug-node.ts';
import { tempDir } from '../lab-support.ts';

const ok = (stdout: string, argv: readonly string[] = ['x']): CommandOutcome => ({
  argv,
  stdout,
  stderr: '',
  exitCode: 0,
});

describe('the commands capture runs', () => {
  const argvOf = (key: string) => nodeCommands(500).find((c) => c.key === key)?.argv;

  it("are the format's commands, exactly", () => {
    expect(argvOf('iptables-save')).toEqual(['iptables-save', '-c']);
    expect(argvOf('nft-ruleset')).toEqual(['nft', 'list', 'ruleset']);
    expect(argvOf('ip-addr')).toEqual(['ip', '-j', '-d', 'addr', 'show']);
    expect(argvOf('ip-link')).toEqual(['ip', '-j', '-d', 'link', 'show']);
    expect(argvOf('ip-route')).toEqual(['ip', '-j', 'route', 'show', 'table', 'all']);
    expect(argvOf('ip-rule')).toEqual(['ip', '-j', 'rule', 'show']);
    expect(argvOf('ip-neigh')).toEqual(['ip', '-j', 'neigh', 'show']);
    expect(argvOf('conntrack-stats')).toEqual(['conntrack', '-S']);
    expect(argvOf('bpf-net')).toEqual(['bpftool', '-j', 'net', 'show']);
    expect(argvOf('bpf-cgroup')).toEqual(['bpftool', '-j', 'cgroup', 'tree']);
    // one line more than kept tells a truncation
    expect(argvOf('conntrack')?.slice(-1)).toEqual(['501']);
    expect(argvOf('conntrack')?.[2]).toContain('conntrack -L -o extended | head -n "$1"');
  });

  it("read a kept run's node's own cgroup where it has one, not the shared host's whole tree", () => {
    const cgroup = (root?: string) => nodeCommands(undefined, root).find((c) => c.key === 'bpf-cgroup')?.argv;
    expect(cgroup('/sys/fs/cgroup/unified/netrepro/abc123/node-a')).toEqual([
      'bpftool',
      '-j',
      'cgroup',
      'tree',
      '/sys/fs/cgroup/unified/netrepro/abc123/node-a',
    ]);
    expect(cgroup()).toEqual(['bpftool', '-j', 'cgroup', 'tree']);
    // a namespace without a cgroup of its own: the host's tree is not its state
    expect(nodeCommands(undefined, false).find((c) => c.key === 'bpf-cgroup')?.skip).toMatch(
      /without a cgroup of its own/,
    );
    expect(nodeScript(nodeCommands(undefined, false))).toContain("skip bpf-cgroup 'the node is a network namespace");
  });

  it('read the conntrack table only when asked, bounded at 10000 lines by default', () => {
    expect(nodeCommands(undefined).some((c) => c.key === 'conntrack')).toBe(false);
    expect(CONNTRACK_DEFAULT_LINES).toBe(10_000);
  });

  it('change nothing: no iptables -L, no modprobe, no write; netlink readers wait for their module', () => {
    const all = nodeCommands(10).map((c) => c.argv.join(' '));
    for (const line of all) {
      expect(line).not.toMatch(
        /iptables\s+(-\S*L|--list)|modprobe|insmod|conntrack\s+-[DFUI]|sysctl\s+-w|\s>\s*\/proc/,
      );
    }
    const needs = (key: string) => nodeCommands(10).find((c) => c.key === key)!;
    expect(needs('conntrack-stats').needsModule).toBe('nf_conntrack_netlink');
    expect(needs('conntrack').needsModule).toBe('nf_conntrack_netlink');
    expect(needs('nft-ruleset').needsModule).toBe('nf_tables');
    expect(needs('iptables-save').needsIptablesTables).toBe(true);
  });
});

/** A Target that answers from a table and records what ran. */
function fakeTarget(answers: Record<string, Partial<CommandOutcome>>): Target & { ran: string[] } {
  const ran: string[] = [];
  return {
    ref: 'node/fake',
    ran,
    exec: async (argv) => {
      ran.push(argv.join(' '));
      const a = Object.entries(answers).find(([prefix]) => argv.join(' ').startsWith(prefix))?.[1] ?? {};
      return {
        argv,
        stdout: a.stdout ?? '',
        stderr: a.stderr ?? '',
        exitCode: a.exitCode ?? 0,
        timedOut: false,
        durationMs: 1,
      };
    },
    spawn: () => {
      throw new Error('not used');
    },
  };
}

describe('a node read command by command', () => {
  it('runs no netlink reader whose module is missing, and says so; a missing program is unreadable, not a crash', async () => {
    const target = fakeTarget({
      'sh -c loaded()': { stdout: 'br_netfilter\n' },
      'iptables --version': { stdout: 'iptables v1.8.9 (nf_tables)\n' },
      bpftool: { exitCode: 127, stderr: 'nsenter: failed to execute bpftool: No such file or directory' },
      'ip -j rule': { exitCode: 2, stderr: 'RTNETLINK answers: Operation not permitted' },
    });
    const outcomes = await new TargetReader(target).read(nodeCommands(10));
    expect(target.ran.some((c) => c.startsWith('conntrack') || c.includes('conntrack -L'))).toBe(false);
    expect(target.ran.some((c) => c.startsWith('nft') || c.startsWith('iptables-save'))).toBe(false);
    const { entry, files } = nodeCapture('node-a', outcomes, { conntrackLines: 10, brNetfilter: 'module' });
    const why = Object.fromEntries(entry.unreadable.map((u) => [u.what, u.why]));
    expect(why['iptables-save']).toBe(
      'nf_tables is not loaded; iptables-nft-save would load it, and capture changes nothing: not run',
    );
    expect(why['conntrack-stats']).toMatch(/^nf_conntrack_netlink is not loaded; conntrack would load it/);
    expect(why.conntrack).toMatch(/^nf_conntrack_netlink is not loaded/);
    expect(why['bpf-net']).toBe('bpftool: command not found');
    expect(why['ip-rule']).toBe('exit 2: RTNETLINK answers: Operation not permitted');
    expect(entry.unreadable.find((u) => u.what === 'bpf-net')?.command).toEqual(['bpftool', '-j', 'net', 'show']);
    // never silently missing: each file key is either a file or unreadable
    for (const key of ['iptables-save', 'ip-addr', 'ip-rule', 'bpf-net', 'bpf-cgroup', 'conntrack-stats'])
      expect(key in entry.files || key in why).toBe(true);
    expect(files.has('nodes/node-a/ip-addr.json')).toBe(true);
    expect(entry.conntrack).toEqual({ captured: false, entries: 0, truncatedAt: null });
  });
});

describe("a node's outcomes as files and manifest entry", () => {
  const outcomes = (extra: Record<string, CommandOutcome> = {}) =>
    new Map<string, CommandOutcome>(
      Object.entries({
        modules: ok('nf_tables\nnf_conntrack_netlink\n'),
        kernel: ok('6.1.0-18-amd64\n'),
        hostname: ok('worker-1\n'),
        'iptables-version': ok('iptables v1.8.9 (nf_tables)\n'),
        'nft-tables': ok('table ip filter\ntable ip nat\n'),
        'nft-ruleset': ok('table ip filter {\n}\n'),
        sysctls: ok(
          'net/ipv4/ip_forward=1\nnet/ipv4/conf/eth0.100/rp_filter=2\nnet/ipv4/ip_local_port_range=32768\t60999\n#net/bridge=absent\n',
        ),
        'iptables-save': ok('*filter\n:FORWARD DROP [0:0]\nCOMMIT\n'),
        ...extra,
      }),
    );

  it('writes each file under nodes/NODE and records it in the entry', () => {
    const { entry, files } = nodeCapture('worker-1', outcomes(), { brNetfilter: 'module' });
    expect(entry.kernel).toBe('6.1.0-18-amd64');
    expect(entry.hostname).toBe('worker-1');
    expect(entry.iptables).toEqual({ version: 'v1.8.9', backend: 'nf_tables' });
    expect(entry.files['iptables-save']).toBe('nodes/worker-1/iptables-save.txt');
    expect(files.get('nodes/worker-1/iptables-save.txt')).toContain(':FORWARD DROP');
    expect(JSON.parse(files.get('nodes/worker-1/sysctls.json')!)).toEqual({
      'net.ipv4.ip_forward': '1',
      'net.ipv4.conf.eth0/100.rp_filter': '2',
      'net.ipv4.ip_local_port_range': '32768\t60999',
    });
    expect(JSON.parse(files.get('nodes/worker-1/modules.json')!)).toEqual({ br_netfilter: false });
    expect(entry.moduleEvidence.br_netfilter).toBe(
      "/proc/sys/net/bridge does not exist in the node's network namespace",
    );
    // iptables-nft's own tables only: iptables-save shows them all, no nft-ruleset.txt
    expect(entry.files['nft-ruleset']).toBeUndefined();
    expect(entry.unreadable).toEqual([]);
  });

  it('keeps nft-ruleset.txt when nft holds tables iptables-save does not show', () => {
    const { entry } = nodeCapture('n', outcomes({ 'nft-tables': ok('table ip filter\ntable inet cilium\n') }), {
      brNetfilter: 'module',
    });
    expect(entry.files['nft-ruleset']).toBe('nodes/n/nft-ruleset.txt');
    expect(tablesBeyondIptables('table ip nat\ntable ip6 nat\n', 'nf_tables')).toEqual(['table ip6 nat']);
    expect(tablesBeyondIptables('table ip nat\n', 'legacy')).toEqual(['table ip nat']);
  });

  it('bounds the conntrack table and records entries and the truncation', () => {
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `ipv4 2 tcp 6 ${i}\n`).join('');
    expect(conntrackTable(ok(lines(4)), 3)).toMatchObject({ entries: 3, truncatedAt: 3 });
    expect(conntrackTable(ok(lines(3)), 3)).toMatchObject({ entries: 3, truncatedAt: null });
    expect(
      conntrackTable({ ...ok(''), stderr: 'conntrack v1.4.7 (conntrack-tools): 0 flow entries have been shown.\n' }, 3),
    ).toMatchObject({ entries: 0, truncatedAt: null });
    expect(conntrackTable({ ...ok(''), stderr: 'conntrack v1.4.7: Operation failed: Permission denied\n' }, 3)).toEqual(
      {
        why: 'conntrack v1.4.7: Operation failed: Permission denied',
      },
    );
    const { entry } = nodeCapture('n', outcomes({ conntrack: ok(lines(5)) }), {
      conntrackLines: 2,
      brNetfilter: 'module',
    });
    expect(entry.conntrack).toEqual({ captured: true, entries: 2, truncatedAt: 2 });
  });

  it('reads br_netfilter as the lab emulates it: bridge-nf-call-iptables=0 is "not loaded"', () => {
    const s = parseSysctls('net/bridge/bridge-nf-call-iptables=0\n#net/bridge=present\n');
    expect(brNetfilter(s, new Set(), true, 'lab-emulation')?.loaded).toBe(false);
    expect(brNetfilter(s, new Set(), true, 'module')?.loaded).toBe(true);
    const on = parseSysctls('net/bridge/bridge-nf-call-iptables=1\n#net/bridge=present\n');
    expect(brNetfilter(on, new Set(), true, 'lab-emulation')?.loaded).toBe(true);
    // without the sysctls, /sys/module says
    expect(brNetfilter(undefined, new Set(['br_netfilter']), true, 'module')).toMatchObject({ loaded: true });
  });

  it('names sysctls as sysctl(8) does and reads iptables versions', () => {
    expect(sysctlName('net/ipv4/conf/all/rp_filter')).toBe('net.ipv4.conf.all.rp_filter');
    expect(sysctlName('net/ipv4/conf/eth0.10/forwarding')).toBe('net.ipv4.conf.eth0/10.forwarding');
    expect(parseIptablesVersion('iptables v1.8.7 (legacy)')).toEqual({ version: 'v1.8.7', backend: 'legacy' });
    expect(parseIptablesVersion('iptables v1.6.1')).toEqual({ version: 'v1.6.1', backend: 'legacy' });
  });
});

/** A program no machine has (built here, so the spawn scan does not take it for one netrepro needs). */
const ABSENT = `no-such-program-${process.pid}`;

describe('the one-script form (kubectl debug)', () => {
  it('runs in a real sh: outputs, stderr, exit statuses and missing programs come back per command', async () => {
    const commands: CaptureCommand[] = [
      { key: 'two-lines', argv: ['printf', 'x\\n@@NR-END two-lines\\n'] },
      { key: 'fails', argv: ['sh', '-c', 'echo partial; echo "it broke" >&2; exit 3'] },
      { key: 'absent', argv: [ABSENT] },
      { key: 'quoted', argv: ['printf', '%s', 'it\'s "quoted" $HOME'] },
    ];
    const r = await runCommand(['sh', '-c', nodeScript(commands)]);
    const out = parseScriptOutput(commands, r.stdout, 'ended early');
    // a command printing a marker cannot end its own record
    expect(out.get('two-lines')).toMatchObject({ stdout: 'x\n@@NR-END two-lines\n', exitCode: 0 });
    expect(out.get('fails')).toMatchObject({ stdout: 'partial\n', stderr: 'it broke\n', exitCode: 3 });
    expect(out.get('absent')?.notRun).toBe(`${ABSENT}: command not found`);
    expect(out.get('quoted')?.stdout).toBe('it\'s "quoted" $HOME');
    expect(out.get(MODULES_COMMAND.key)?.exitCode).toBe(0);
  });

  it('guards a netlink reader inside the script as TargetReader does', () => {
    const script = nodeScript(nodeCommands(10));
    expect(script).toContain(
      "elif ! loaded nf_conntrack_netlink; then skip conntrack-stats 'nf_conntrack_netlink is not loaded; conntrack would load it, and capture changes nothing: not run'; else nr conntrack-stats 'conntrack' '-S'; fi",
    );
    expect(script).toContain(
      'elif iptables --version 2>/dev/null | grep -q nf_tables && ! loaded nf_tables; then skip iptables-save',
    );
  });

  it('says why for every command when the pod never ran', async () => {
    const reader = new ScriptReader(async () => ({ stdout: '', failure: 'kubectl debug node/n1: exit 1: image pull' }));
    const out = await reader.read(nodeCommands(undefined));
    expect(out.get('iptables-save')?.notRun).toBe('kubectl debug node/n1: exit 1: image pull');
  });

  it('is run by kubectl debug with the host chrooted, read from its log, and its pod deleted after', () => {
    expect(kubectlDebugArgv({ kubeconfig: '/k', node: 'worker-1', image: 'busybox:1.36', script: 'S' })).toEqual([
      'kubectl',
      '--kubeconfig',
      '/k',
      'debug',
      'node/worker-1',
      '--image=busybox:1.36',
      '--attach=false',
      '--',
      'chroot',
      '/host',
      '/bin/sh',
      '-c',
      'S',
    ]);
    expect(
      kubectlDebugArgv({ kubectl: '/opt/kubectl', node: 'n', image: 'i', profile: 'sysadmin', script: 'S' }).slice(
        0,
        6,
      ),
    ).toEqual(['/opt/kubectl', 'debug', 'node/n', '--image=i', '--profile=sysadmin', '--attach=false']);
    expect(
      debugPodName('Creating debugging pod node-debugger-worker-1-x7k2p with container debugger on node worker-1.'),
    ).toBe('node-debugger-worker-1-x7k2p');
    const pod = 'node-debugger-worker-1-x7k2p';
    expect(podPhaseArgv({ kubeconfig: '/k' }, pod)).toEqual([
      'kubectl',
      '--kubeconfig',
      '/k',
      'get',
      'pod',
      pod,
      '-o',
      'jsonpath={.status.phase}',
    ]);
    expect(podLogsArgv({}, pod)).toEqual(['kubectl', 'logs', pod]);
    expect(deleteDebugPodArgv({}, pod)).toEqual(['kubectl', 'delete', 'pod', pod, '--wait=false']);
  });
});

/** A bundle as a cluster running a shop would give. */
function shopBundle(): Bundle {
  const pod = (name: string, ns: string, owner: string) => ({
    metadata: {
      name,
      namespace: ns,
      generateName: `${owner}-`,
      labels: { app: 'checkout', 'pod-template-hash': '7d9f' },
      ownerReferences: [{ kind: 'ReplicaSet', name: owner }],
      managedFields: [{ manager: 'kubelet', fieldsV1: { 'f:metadata': {} } }],
      annotations: {
        'kubectl.kubernetes.io/last-applied-configuration': `{"metadata":{"name":"${name}","namespace":"${ns}"}}`,
      },
    },
    spec: { nodeName: 'worker-1', containers: [{ name: 'checkout', image: 'registry.example/shop/checkout:1.4' }] },
    status: { podIP: '10.244.1.7' },
  });
  const files = new Map<string, string>([
    [
      'cluster/pods.json',
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [pod('checkout-7d9f-abcde', 'shop', 'checkout-7d9f'), pod('coredns-1', 'kube-system', 'coredns')],
      }),
    ],
    [
      'cluster/services.json',
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [
          {
            metadata: { name: 'checkout', namespace: 'shop' },
            spec: { clusterIP: '10.96.0.42', selector: { app: 'checkout' }, ports: [{ name: 'http', port: 80 }] },
          },
          { metadata: { name: 'kubernetes', namespace: 'default' }, spec: { clusterIP: '10.96.0.1' } },
        ],
      }),
    ],
    [
      'cluster/endpointslices.json',
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [
          {
            metadata: {
              name: 'checkout-x2x9z',
              namespace: 'shop',
              labels: { 'kubernetes.io/service-name': 'checkout' },
            },
            endpoints: [
              { addresses: ['10.244.1.7'], targetRef: { kind: 'Pod', name: 'checkout-7d9f-abcde', namespace: 'shop' } },
            ],
          },
        ],
      }),
    ],
    [
      'nodes/worker-1/iptables-save.txt',
      [
        '*nat',
        '[0:0] -A KUBE-SERVICES -d 10.96.0.42/32 -p tcp -m comment --comment "shop/checkout:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-ABCDEFGH12345678',
        '[0:0] -A KUBE-SVC-ABCDEFGH12345678 -m comment --comment shop/checkout:http -j KUBE-SEP-ZYXWVUTS87654321',
        '[0:0] -A KUBE-SEP-ZYXWVUTS87654321 -p tcp -m comment --comment "shop/checkout:http" -m tcp -j DNAT --to-destination 10.244.1.7:8080',
        '[0:0] -A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -j KUBE-NODEPORTS',
        'COMMIT',
        '',
      ].join('\n'),
    ],
    [
      'nodes/worker-1/nft-ruleset.txt',
      'table inet x {\n\tchain c {\n\t\tip daddr 10.96.0.42 counter accept comment "shop/checkout:http"\n\t}\n}\n',
    ],
    ['nodes/worker-1/ip-route.json', '[{"dst":"default","gateway":"172.18.0.1","dev":"eth0"}]'],
  ]);
  return {
    manifest: {
      format: BUNDLE_FORMAT,
      netrepro: '0.1.0',
      capturedAt: '2026-11-28T17:30:00.000Z',
      source: { kind: 'host', run: null, kubeconfig: '/k' },
      kubernetes: { serverVersion: 'v1.20.2' },
      redacted: false,
      cluster: { files: {}, unreadable: [] },
      nodes: [],
    },
    files,
  };
}

describe('--redact', () => {
  const ORIGINAL = ['shop', 'checkout', 'checkout-7d9f-abcde', 'checkout-7d9f', 'checkout-x2x9z'];

  it('leaves none of the original names in any file, and keeps addresses, ports, chains and rules', () => {
    const bundle = shopBundle();
    const redaction = redactionOf(bundle);
    const red = redactBundle(bundle, redaction);
    for (const [path, text] of red.files)
      for (const name of ORIGINAL)
        expect(text, `${path} still holds ${name}`).not.toMatch(new RegExp(`(?<![\\w-])${name}`));
    const rules = red.files.get('nodes/worker-1/iptables-save.txt')!;
    const before = bundle.files.get('nodes/worker-1/iptables-save.txt')!;
    // only the comments changed: remove them and the rules are the same
    const uncommented = (t: string) => t.replace(/--comment ("[^"]*"|\S+)/g, '');
    expect(uncommented(rules)).toBe(uncommented(before));
    expect(rules).toContain('--comment "ns-1/svc-1:http cluster IP"');
    expect(rules).toContain('--comment ns-1/svc-1:http -j KUBE-SEP-ZYXWVUTS87654321');
    expect(rules).toContain('"kubernetes service nodeports; NOTE: this must be the last rule in this chain"');
    expect(red.files.get('nodes/worker-1/nft-ruleset.txt')).toContain('comment "ns-1/svc-1:http"');
    expect(red.files.get('nodes/worker-1/ip-route.json')).toBe(bundle.files.get('nodes/worker-1/ip-route.json'));
    expect(red.manifest.redacted).toBe(true);
  });

  it('renames consistently across files and keeps what every cluster has', () => {
    const red = redactBundle(shopBundle());
    const pods = JSON.parse(red.files.get('cluster/pods.json')!);
    const slices = JSON.parse(red.files.get('cluster/endpointslices.json')!);
    const services = JSON.parse(red.files.get('cluster/services.json')!);
    expect(pods.items[0].metadata.name).toBe(slices.items[0].endpoints[0].targetRef.name);
    expect(services.items[0].metadata.name).toBe(slices.items[0].metadata.labels['kubernetes.io/service-name']);
    expect(services.items[0].spec).toMatchObject({ clusterIP: '10.96.0.42', ports: [{ name: 'http', port: 80 }] });
    expect(services.items[0].spec.selector).toEqual(
      pods.items[0].metadata.labels.app ? { app: pods.items[0].metadata.labels.app } : {},
    );
    expect(pods.items[0].metadata.managedFields).toBeUndefined();
    expect(pods.items[1].metadata).toMatchObject({ name: 'coredns-1', namespace: 'kube-system' });
    expect(services.items[1].metadata).toEqual({ name: 'kubernetes', namespace: 'default' });
  });

  it('gives the mapping back for the user, by kind', () => {
    const mapping = redactionMapping(redactionOf(shopBundle()));
    expect(mapping.namespace).toEqual({ shop: 'ns-1' });
    expect(mapping.service).toEqual({ checkout: 'svc-1' });
    expect(mapping.pod).toEqual({ 'checkout-7d9f-abcde': 'pod-1' });
    expect(Object.keys(mapping.owner).sort()).toEqual(['checkout-7d9f', 'checkout-x2x9z']);
    expect(mappingPath('/tmp/b.tar.gz')).toBe('/tmp/b.redaction.json');
    expect(mappingPath('/tmp/b/')).toBe('/tmp/b.redaction.json');
  });

  it('finds names in rule comments when no cluster objects were read', () => {
    const bundle = shopBundle();
    for (const p of [...bundle.files.keys()]) if (p.startsWith('cluster/')) bundle.files.delete(p);
    const red = redactBundle(bundle);
    expect(red.files.get('nodes/worker-1/iptables-save.txt')).not.toMatch(/shop|checkout/);
  });
});

describe('the bundle', () => {
  const reader = (outcomes: Record<string, CommandOutcome>) => ({
    read: async () => new Map(Object.entries(outcomes)),
  });

  it('has the agreed manifest', async () => {
    const bundle = await captureBundle({
      source: { kind: 'lab', run: 'abc123', kubeconfig: null },
      nodes: [{ name: 'node-a', reader: reader({ kernel: ok('6.1\n'), 'ip-addr': ok('[]') }) }],
      cluster: async () => givenClusterObjects({ nodes: { items: [] }, pods: {}, services: {}, endpointslices: {} }),
      node: { brNetfilter: 'lab-emulation' },
      now: () => new Date('2026-11-28T17:30:00.000Z'),
    });
    const m = JSON.parse(bundleFiles(bundle).get('manifest.json')!);
    expect(m).toMatchObject({
      format: 'netrepro-capture/1',
      capturedAt: '2026-11-28T17:30:00.000Z',
      source: { kind: 'lab', run: 'abc123', kubeconfig: null },
      kubernetes: null,
      redacted: false,
      cluster: {
        files: { nodes: 'cluster/nodes.json', endpointslices: 'cluster/endpointslices.json' },
        unreadable: [],
      },
      nodes: [{ name: 'node-a', kernel: '6.1', files: { 'ip-addr': 'nodes/node-a/ip-addr.json' } }],
    });
    expect(typeof m.netrepro).toBe('string');
  });

  it('reads cluster lists through kubectl; one that fails is unreadable with its command', async () => {
    const cluster = await readClusterObjects(async (args) => {
      const argv = ['kubectl', ...args];
      if (args[1] === 'endpointslices') return { argv, stdout: '', stderr: 'error: forbidden\n', exitCode: 1 };
      if (args[0] === 'version')
        return { argv, stdout: '{"serverVersion":{"gitVersion":"v1.20.2"}}', stderr: '', exitCode: 0 };
      return { argv, stdout: '{"items":[]}', stderr: '', exitCode: 0 };
    });
    expect(cluster.serverVersion).toBe('v1.20.2');
    expect(Object.keys(cluster.entry.files)).toEqual(['nodes', 'pods', 'services']);
    expect(cluster.entry.unreadable).toEqual([
      {
        what: 'endpointslices',
        command: ['kubectl', 'get', 'endpointslices', '-A', '-o', 'json'],
        why: 'exit 1: error: forbidden',
      },
    ]);
  });

  it('is written as a directory or a .tar.gz by tar, refusing to overwrite', async () => {
    const dir = await tempDir();
    const files = new Map([
      ['manifest.json', '{}\n'],
      ['nodes/a/ip-addr.json', '[]'],
    ]);
    const asDir = await writeBundle(join(dir, 'b'), files);
    expect(await readFile(join(dir, 'b/nodes/a/ip-addr.json'), 'utf8')).toBe('[]');
    expect(asDir.sizes.get('manifest.json')).toBe(3);
    await expect(writeBundle(join(dir, 'b'), files)).rejects.toThrow(/is not empty/);
    const tar = await writeBundle(join(dir, 'b.tar.gz'), files);
    expect(tar.tarballBytes).toBeGreaterThan(0);
    expect(execFileSync('tar', ['-tzf', join(dir, 'b.tar.gz')], { encoding: 'utf8' }).split('\n')).toContain(
      'b/nodes/a/ip-addr.json',
    );
    expect(defaultBundleName('node-a', new Date('2026-11-28T17:30:05.123Z'))).toBe(
      'netrepro-capture-node-a-20261128T173005Z',
    );
  });
});

const scenario = parseScenario(
  `id: s
title: s
topology:
  cni: bridge
  nodes: [{ name: a, podCIDR: 10.244.1.0/24 }]
  pods:
    - { name: client, node: a }
    - { name: web, node: a, serve: [{ http: 8080 }], hostPorts: [{ hostPort: 30080, containerPort: 8080 }] }
  services:
    - { name: web, namespace: shop, clusterIP: 10.96.0.20, ports: [{ name: http, port: 80, targetPort: 8080 }], endpoints: [web] }
probes: [{ id: p, from: client, http: { to: svc/web, port: 80 } }]
baseline: { expect: { p: ok } }
fault: { steps: [{ run: { on: node/a, cmd: "true" } }], expect: { p: timeout } }
fixes:
  - { name: one, steps: [{ run: { on: node/a, cmd: "true" } }], expect: { p: ok } }
  - { name: two, steps: [{ run: { on: node/a, cmd: "true" } }], expect: { p: ok } }
`,
  's.yaml',
);

describe("a lab's cluster objects", () => {
  it('are what kubectl would list: nodes with podCIDR and InternalIP, placed pods, Services, EndpointSlices', () => {
    const addresses: Record<string, string> = {
      'node/a': '172.18.0.2',
      'pod/client': '10.244.1.2',
      'pod/web': '10.244.1.3',
    };
    const o = labClusterObjects(scenario.topology, (ref) => addresses[ref]);
    expect(o.nodes.items[0]).toMatchObject({
      metadata: { name: 'a' },
      spec: { podCIDR: '10.244.1.0/24' },
      status: {
        addresses: [
          { type: 'InternalIP', address: '172.18.0.2' },
          { type: 'Hostname', address: 'a' },
        ],
      },
    });
    expect(o.pods.items[1]).toMatchObject({
      metadata: { name: 'web', namespace: 'shop' },
      spec: {
        nodeName: 'a',
        hostNetwork: false,
        containers: [{ ports: [{ containerPort: 8080, protocol: 'TCP', hostPort: 30080 }] }],
      },
      status: { podIP: '10.244.1.3', hostIP: '172.18.0.2' },
    });
    expect(o.services.items[0]).toMatchObject({
      metadata: { name: 'web', namespace: 'shop' },
      spec: { clusterIP: '10.96.0.20' },
    });
    expect(o.endpointslices.items[0]).toMatchObject({ endpoints: [{ addresses: ['10.244.1.3'], nodeName: 'a' }] });
  });
});

describe('run --stop-after', () => {
  it('runs one lab up to baseline or faulted, or only the named fix', () => {
    expect(stopAfterPlan(scenario, scenario.fixes, 'baseline')).toMatchObject({ phases: 1, fixes: [{ name: 'one' }] });
    expect(stopAfterPlan(scenario, scenario.fixes, 'faulted')).toMatchObject({ phases: 2, fixes: [{ name: 'one' }] });
    expect(stopAfterPlan(scenario, scenario.fixes, 'two')).toMatchObject({ phases: 3, fixes: [{ name: 'two' }] });
    expect(stopAfterPlan(scenario, scenario.fixes, undefined).fixes).toHaveLength(2);
    expect(() => stopAfterPlan(scenario, scenario.fixes, 'fixed')).toThrow(/--stop-after fixed: it has no fix fixed/);
    expect(() => stopAfterPlan(scenario, scenario.fixes.slice(0, 1), 'two')).toThrow(/cannot run on this provider/);
  });
});
