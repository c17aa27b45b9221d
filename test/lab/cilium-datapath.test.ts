// The cilium shape's datapath as Cilium behaves, measured on a real lab: SNAT by full tuple (two pods,
// one source port; ICMP echo), ICMP errors reverse-translated through SNAT (port unreachable, PMTU), and socket LB
// showing the ClusterIP to getpeername() while connect() went to the backend.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { provisionNetnsLab } from '../../src/providers/netns/provision-netns-lab.ts';
import type { NetnsLab } from '../../src/providers/netns/netns-lab.ts';
import { newRunId, runPrefix } from '../../src/contract/run-id.ts';
import { Topology } from '../../src/model/scenario-schema.ts';
import { labSkipReason } from '../lab-support.ts';

const topology = Topology.parse({
  cni: 'cilium',
  cilium: { bpfMasquerade: true, socketLB: true },
  startOrder: ['cilium'],
  nodes: [{ name: 'node-a', podCIDR: '10.244.1.0/24' }],
  pods: [
    { name: 'pod-a', node: 'node-a' },
    { name: 'pod-b', node: 'node-a' },
    { name: 'web', node: 'node-a', serve: [{ http: 8080 }] },
  ],
  hosts: [{ name: 'docs', serve: [{ http: 80 }] }],
  services: [
    { name: 'web', clusterIP: '10.96.0.30', ports: [{ port: 80, targetPort: 8080 }], endpoints: ['web'] },
    {
      name: 'empty-dns',
      clusterIP: '10.96.0.11',
      ports: [{ port: 53, targetPort: 53, protocol: 'UDP' }],
      endpoints: [],
    },
  ],
});

/** Runs a short Node.js script in a pod (node is on the host's filesystem, which the namespaces share). */
const nodeScript = (lab: NetnsLab, pod: string, script: string) =>
  lab.pod(pod).exec([process.execPath, '-e', script], { reject: false, timeoutMs: 10_000 });

describe.skipIf(labSkipReason)('cilium datapath', () => {
  let lab: NetnsLab;
  let docs: string;
  let nodeIp: string;
  beforeAll(async () => {
    const runId = newRunId();
    lab = await provisionNetnsLab(topology, {
      runId,
      prefix: runPrefix(runId),
      signal: new AbortController().signal,
      log: () => {},
    });
    docs = lab.address('host/docs');
    nodeIp = lab.address('node/node-a');
  });
  afterAll(() => lab?.destroy());

  it('two pods connecting out from the same source port at once both get their own replies', async () => {
    const curl = (pod: string) =>
      lab
        .pod(pod)
        .exec(['curl', '-sS', '--max-time', '3', '--local-port', '40000', '-w', ' %{local_port}', `http://${docs}/`], {
          reject: false,
        });
    const [a, b] = await Promise.all([curl('pod-a'), curl('pod-b')]);
    expect([a.exitCode, a.stdout.replace(/\s+/g, ' ').trim()]).toEqual([0, 'docs 40000']);
    expect([b.exitCode, b.stdout.replace(/\s+/g, ' ').trim()]).toEqual([0, 'docs 40000']);
    // the server saw two different source ports on the node address: one kept 40000, the other was moved
    const dump = await lab
      .node('node-a')
      .exec([
        'bpftool',
        '--nomount',
        '-j',
        'map',
        'dump',
        'pinned',
        '/sys/fs/bpf/netrepro/masq-maps/cilium_snat_v4_external',
      ]);
    const entries = JSON.parse(dump.stdout) as {
      formatted: { key: { dport: number; flags: number; nexthdr: number } };
    }[];
    const replyPorts = entries
      .filter((e) => e.formatted.key.flags === 1 && e.formatted.key.nexthdr === 6)
      .map((e) => swap16(e.formatted.key.dport));
    expect(replyPorts).toHaveLength(2);
    expect(replyPorts).toContain(40000);
    expect(new Set(replyPorts).size).toBe(2);
  });

  it("reverse-translates an ICMP port unreachable: the pod's connected UDP socket gets ECONNREFUSED", async () => {
    const r = await nodeScript(
      lab,
      'pod-a',
      // the error is reported on the socket's next operation after the ICMP arrived
      `const s=require('dgram').createSocket('udp4');s.on('error',e=>{console.log(e.code);process.exit(0)});` +
        `s.connect(9999,'${docs}',()=>{s.send('x');setTimeout(()=>s.send('y'),300);setTimeout(()=>{console.log('no error');process.exit(0)},1500)})`,
    );
    expect(r.stdout.trim()).toBe('ECONNREFUSED');
  });

  it('reverse-translates ICMP fragmentation needed: the pod learns the path MTU', async () => {
    // the pod keeps a UDP socket from port 45000 (kept by SNAT: in range, free) to docs:9999; docs answers
    // port unreachable, which must not end the process: the socket has to be there for the PMTU update
    const holder = lab
      .pod('pod-a')
      .spawn([
        process.execPath,
        '-e',
        `const s=require('dgram').createSocket('udp4');s.on('error',()=>{});s.bind(45000,()=>s.connect(9999,'${docs}',()=>{s.send('x');console.log('sent');setTimeout(()=>{},5000)}))`,
      ]);
    try {
      await holder.waitFor(/^sent$/, 3000);
      // a router on the path would send this; docs forges it: "fragmentation needed, MTU 1200" quoting node:45000 -> docs:9999
      const forged = await lab
        .host('docs')
        .exec(['/usr/bin/python3', '-c', FRAG_NEEDED, nodeIp, docs, '45000', '9999', '1200'], { reject: false });
      expect(forged.exitCode).toBe(0);
      let route = '';
      for (let i = 0; i < 20 && !/mtu 1200/.test(route); i++) {
        await new Promise((r) => setTimeout(r, 50));
        route = (await lab.pod('pod-a').exec(['ip', 'route', 'get', docs])).stdout;
      }
      expect(route).toMatch(/mtu 1200/);
    } finally {
      await holder.stop('SIGKILL');
    }
  });

  it('ICMP echo is masqueraded too: two pods ping out with the same identifier at once, both get their replies', async () => {
    // no ping(8) here: a raw-socket echo with a fixed identifier, which also collides between the pods
    const ping = (pod: string) =>
      lab.pod(pod).exec(['/usr/bin/python3', '-c', ECHO, docs, '4242'], { reject: false, timeoutMs: 5000 });
    const [a, b] = await Promise.all([ping('pod-a'), ping('pod-b')]);
    expect([a.stdout.trim(), b.stdout.trim()]).toEqual(['reply 4242', 'reply 4242']);
  });

  it('socket LB: connect() goes to the backend, getpeername() shows the ClusterIP', async () => {
    const r = await nodeScript(
      lab,
      'pod-a',
      `const c=require('net').connect(80,'10.96.0.30',()=>{console.log(c.remoteAddress+':'+c.remotePort);c.end();});c.on('error',e=>console.log(e.code));`,
    );
    expect(r.stdout.trim()).toBe('10.96.0.30:80');
    const capture = await lab
      .node('node-a')
      .exec([
        'bpftool',
        '--nomount',
        '-j',
        'map',
        'dump',
        'pinned',
        '/sys/fs/bpf/netrepro/sock-current-maps/cilium_lb4_reverse_sk',
      ]);
    expect((JSON.parse(capture.stdout) as unknown[]).length).toBeGreaterThan(0);
  });

  it('socket LB: sendto() a UDP Service without backends fails with EHOSTUNREACH (sendmsg4 rejects it)', async () => {
    const r = await nodeScript(
      lab,
      'pod-a',
      `const s=require('dgram').createSocket('udp4');s.send('x',53,'10.96.0.11',(e)=>{console.log(e?e.code:'sent');process.exit(0)});`,
    );
    expect(r.stdout.trim()).toBe('EHOSTUNREACH');
  });
});

/** bpftool's BTF view prints a __be16 as the host integer of its bytes. */
const swap16 = (n: number) => ((n & 0xff) << 8) | (n >> 8);

/** One ICMP echo request with identifier argv[2] to argv[1]; prints `reply ID` for the matching reply, or `timeout`. */
const ECHO = `
import socket, struct, sys, time
dst, ident = sys.argv[1], int(sys.argv[2])
def csum(b):
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b)); s = (s >> 16) + (s & 0xffff); s += s >> 16
    return ~s & 0xffff
msg = struct.pack('!BBHHH', 8, 0, 0, ident, 1) + b'netrepro'
msg = msg[:2] + struct.pack('!H', csum(msg)) + msg[4:]
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
s.settimeout(0.5)
s.sendto(msg, (dst, 0))
end = time.time() + 2
while time.time() < end:
    try: data, (src, _) = s.recvfrom(2048)
    except socket.timeout: continue
    icmp = data[(data[0] & 15) * 4:]
    if src == dst and icmp[0] == 0 and struct.unpack('!H', icmp[4:6])[0] == ident:
        print('reply', ident); sys.exit(0)
print('timeout')
`;

/** ICMP type 3 code 4 from a raw socket, quoting an IPv4/UDP header: argv node, server, sport, dport, mtu. */
const FRAG_NEEDED = `
import socket, struct, sys
node, server, sport, dport, mtu = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
def csum(b):
    if len(b) % 2: b += b'\\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b)); s = (s >> 16) + (s & 0xffff); s += s >> 16
    return ~s & 0xffff
ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 1500, 1, 0x4000, 64, 17, 0, socket.inet_aton(node), socket.inet_aton(server))
ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
quote = ip + struct.pack('!HHHH', sport, dport, 1480, 0)
icmp = struct.pack('!BBHHH', 3, 4, 0, 0, mtu) + quote
icmp = icmp[:2] + struct.pack('!H', csum(icmp)) + icmp[4:]
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
s.sendto(icmp, (node, 0))
`;
