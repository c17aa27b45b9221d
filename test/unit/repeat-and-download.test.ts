import { describe, expect, it } from 'vitest';
import {
  flannelDevice,
  flannelPeerEntries,
  networkAddress,
  vtepMac,
  type FlannelNode,
} from '../../src/dataplane/flannel-entries.ts';
import { matchExpectation } from '../../src/observe/expect/match-expectation.ts';
import { printableStrings, readCounter } from '../../src/observe/expect/run-checks.ts';
import { parseScenario } from '../../src/model/load-scenario.ts';
import type { Observation } from '../../src/model/outcome.ts';
import type { ExpectedSpec } from '../../src/model/scenario-schema.ts';
import { classifyDownload, foreignSegment } from '../../src/observe/probes/classify.ts';
import { parseTcpdumpLine, type Packet } from '../../src/observe/probes/packet-watch.ts';
import { distribution, foldRuns, pooled } from '../../src/observe/probes/repeat-stats.ts';

const vip = { ip: '10.96.0.30', port: 80 };
const client = '10.244.1.2';
const packets = (lines: string[]) => lines.map((l) => parseTcpdumpLine(l)!) as Packet[];
const obs = (outcome: Observation['outcome'], servedBy?: string, source?: string): Observation => ({
  outcome,
  servedBy,
  source,
  summary: `x = ${outcome}`,
  durationMs: 1,
  detail: {},
});
const address = (ref: string) => ({ 'pod/web-a': '10.244.1.3', 'pod/web-b': '10.244.2.2' })[ref] ?? '0.0.0.0';

describe('repeated probes: distribution and matching', () => {
  const series = [
    ...Array(15).fill(obs('unexpected-source', undefined, '10.244.1.3:8080')),
    ...Array(25).fill(obs('ok', 'web-b', '10.96.0.23:80')),
  ] as Observation[];
  const folded = foldRuns('client -> svc/web-spread:80', series, 1234);

  it('counts outcomes and servedBy, most frequent first', () => {
    expect(distribution(series)).toEqual({
      runs: 40,
      outcomes: { ok: 25, 'unexpected-source': 15 },
      servedBy: { 'web-b': 25 },
    });
    expect(folded.outcome).toBe('ok');
    expect(folded.summary).toBe(
      'client -> svc/web-spread:80 = 40 runs: 25 ok, 15 unexpected-source; served by web-b 25',
    );
    expect(Object.keys(folded.detail.examples as object).sort()).toEqual(['ok', 'unexpected-source']);
  });

  it('a count range holds, and otherwise constrains every other run', () => {
    const m = matchExpectation(
      { outcome: 'unexpected-source', source: 'pod/web-a', count: { min: 8, max: 32 }, otherwise: 'ok' },
      folded,
      address,
    );
    expect(m).toMatchObject({
      matched: true,
      expected: 'unexpected-source, from pod/web-a (10.244.1.3) in 8..32 of 40 runs, otherwise ok',
    });
    expect(matchExpectation({ outcome: 'unexpected-source', count: { min: 16 } }, folded, address)).toMatchObject({
      matched: false,
      mismatch: expect.stringMatching(/^15 of 40 runs matched/),
    });
    expect(
      matchExpectation({ outcome: 'unexpected-source', count: { min: 1 }, otherwise: 'timeout' }, folded, address),
    ).toMatchObject({
      matched: false,
      mismatch: expect.stringMatching(/^25 run\(s\) neither unexpected-source nor timeout/),
    });
  });

  it('sameBackend: every run that meets the expectation was answered by one pod, whichever', () => {
    const sticky = foldRuns(
      'client -> svc/web:80',
      Array(6).fill(obs('ok', 'web-b', '10.96.0.23:80')) as Observation[],
      10,
    );
    expect(matchExpectation({ outcome: 'ok', sameBackend: true }, sticky, address)).toMatchObject({
      matched: true,
      expected: 'ok in every run (6), all served by one pod',
    });
    const spread = foldRuns(
      'client -> svc/web:80',
      [
        ...Array(3).fill(obs('ok', 'web-a', '10.96.0.23:80')),
        ...Array(3).fill(obs('ok', 'web-b', '10.96.0.23:80')),
      ] as Observation[],
      10,
    );
    expect(matchExpectation({ outcome: 'ok', sameBackend: true }, spread, address)).toMatchObject({
      matched: false,
      mismatch: expect.stringMatching(/^the runs were served by 2 pods \(web-a, web-b\), not one/),
    });
    expect(matchExpectation({ outcome: 'ok' }, spread, address).matched).toBe(true);
  });

  it('a rate range is a fraction of the runs', () => {
    expect(matchExpectation({ outcome: 'ok', rate: { min: 0.5, max: 0.7 } }, folded, address).matched).toBe(true);
    expect(matchExpectation({ outcome: 'ok', rate: { min: 0.7 } }, folded, address)).toMatchObject({
      matched: false,
      mismatch: expect.stringMatching(/^62\.5% of 40 runs/),
    });
  });

  it('without count or rate every run must match, servedBy included', () => {
    expect(matchExpectation('ok', folded, address).matched).toBe(false);
    const allOk = foldRuns('x', [obs('ok', 'web'), obs('ok', 'web')], 1);
    expect(matchExpectation({ outcome: 'ok', servedBy: 'web' }, allOk, address)).toMatchObject({
      matched: true,
      expected: 'ok, served by web in every run (2)',
    });
    expect(matchExpectation({ outcome: 'ok', servedBy: 'other' }, allOk, address).matched).toBe(false);
  });

  it('each run keeps the client address its server saw: a count of the runs seen as the client holds', () => {
    const seen = (clientAddress: string): Observation => ({ ...obs('ok', 'web-a'), clientAddress });
    const runs = foldRuns('x', [seen('10.244.1.2:20001'), seen('172.18.0.3:61001'), seen('10.244.1.2:20003')], 1);
    expect(runs.clientAddress).toBeUndefined(); // not the same in every run
    const asClient = (count: number): ExpectedSpec => ({ outcome: 'ok', clientAddress: '10.244.1.2', count });
    expect(matchExpectation(asClient(2), runs, address).matched).toBe(true);
    expect(matchExpectation(asClient(3), runs, address).matched).toBe(false);
    expect(foldRuns('x', [seen('10.244.1.2:1'), seen('10.244.1.2:1')], 1).clientAddress).toBe('10.244.1.2:1');
  });

  it('zero of a rare outcome passes an honest {min: 0} expectation, a stray error does not', () => {
    const load = foldRuns('x', Array(24).fill(obs('ok', 'web')) as Observation[], 1);
    const spec: ExpectedSpec = { outcome: 'reset', count: { min: 0 }, otherwise: 'ok' };
    expect(matchExpectation(spec, load, address).matched).toBe(true);
    expect(matchExpectation(spec, foldRuns('x', [obs('ok'), obs('timeout')], 1), address).matched).toBe(false);
  });

  it('single runs are unchanged', () => {
    expect(matchExpectation('ok', obs('ok'), address)).toEqual({ matched: true, expected: 'ok' });
  });

  it('pooled runs at most `parallel` tasks at once and keeps order', async () => {
    let running = 0;
    let peak = 0;
    const out = await pooled(10, 3, async (i) => {
      peak = Math.max(peak, ++running);
      await new Promise((r) => setTimeout(r, 5));
      running--;
      return i;
    });
    expect(out).toEqual([...Array(10).keys()]);
    expect(peak).toBe(3);
  });

  it('the binomial bound of the locality scenario: P(X outside 8..32) for Binomial(40, 0.5) is below 1e-4', () => {
    const choose = (n: number, k: number) => {
      let c = 1;
      for (let i = 1; i <= k; i++) c = (c * (n - k + i)) / i;
      return c;
    };
    const tail = [...Array(8).keys()].reduce((s, k) => s + choose(40, k), 0) / 2 ** 40;
    expect(2 * tail).toBeLessThan(1e-4);
    expect(2 * tail).toBeGreaterThan(1e-5);
  });
});

describe('download classification', () => {
  const d = (exitCode: number, sizeDownload: number, stderr = '', httpCode = 200) => ({
    exitCode,
    stderr,
    httpCode,
    body: '',
    bytes: 20_000_000,
    sizeDownload,
    servedBy: 'web',
  });
  it('ok only with the full byte count', () => {
    expect(classifyDownload(d(0, 20_000_000), [], client, vip)).toMatchObject({ outcome: 'ok', servedBy: 'web' });
    expect(classifyDownload(d(0, 19_999_999), [], client, vip).outcome).toBe('wrong-answer');
  });
  it('a reset names the un-NATed packet and the client RST to the pod IP', () => {
    const seen = packets([
      '12:00:00.000001 IP 10.244.1.3.8080 > 10.244.1.2.32854: Flags [P.], seq 2609140858:2609140874, ack 3095080996, win 64, length 16',
      '12:00:00.000002 IP 10.244.1.2.32854 > 10.244.1.3.8080: Flags [R], seq 3095080996, win 0, length 0',
      '12:00:00.000003 IP 10.96.0.30.80 > 10.244.1.2.32854: Flags [R], seq 1535529354, win 0, length 0',
    ]);
    expect(foreignSegment(seen, client, vip)).toMatchObject({
      clientReset: true,
      packet: { src: '10.244.1.3', sport: 8080 },
    });
    const c = classifyDownload(
      d(56, 1_407_624, 'curl: (56) Recv failure: Connection reset by peer'),
      seen,
      client,
      vip,
    );
    expect(c).toMatchObject({ outcome: 'reset', source: '10.244.1.3:8080' });
    expect(c.reason).toBe(
      'a packet from 10.244.1.3:8080 (not 10.96.0.30:80: it missed its reverse NAT) reached the client, which answered RST to 10.244.1.3:8080; curl exit 56 "curl: (56) Recv failure: Connection reset by peer" after 1407624 of 20000000 bytes',
    );
  });
  it('a reset without a foreign packet is still a reset; a timeout is a timeout', () => {
    const c = classifyDownload(d(56, 10, 'curl: (56) Recv failure: Connection reset by peer'), [], client, vip);
    expect(c.outcome).toBe('reset');
    expect(c.source).toBeUndefined();
    expect(classifyDownload(d(28, 10, 'curl: (28) Operation timed out'), [], client, vip).outcome).toBe('timeout');
  });
});

describe('checks: summed counters and printable strings of binary output', () => {
  it('sums a counter over per-CPU lines', () => {
    const out = 'cpu=0 found=0 invalid=2 insert=0\ncpu=1 found=0 invalid=3 insert=0\n';
    expect(readCounter(out, '\\binvalid=(\\d+)', true)?.value).toBe(5);
    expect(readCounter(out, '\\binvalid=(\\d+)')?.value).toBe(2);
    expect(readCounter(out, 'no such (\\d+)')).toBeUndefined();
  });
  it('finds conntrack reason text inside an NFLOG pcap stream', () => {
    const line =
      '\u0000\u0001\u0002\u0000nf_ct_proto_6: SEQ is over upper bound 123 (over the window of the receiver)\u0000\u0010E\u0000';
    expect(printableStrings([line])).toContain(
      'nf_ct_proto_6: SEQ is over upper bound 123 (over the window of the receiver)',
    );
  });
});

describe('flannel entries', () => {
  const nodes: FlannelNode[] = [
    { name: 'a', podCIDR: '10.244.1.0/24', nodeIP: '172.18.0.2', vtepMac: vtepMac(1) },
    { name: 'b', podCIDR: '10.244.2.0/24', nodeIP: '172.18.0.3', vtepMac: vtepMac(2) },
  ];
  it('a VTEP per node addressed with its pod network /32', () => {
    expect(networkAddress('10.244.2.77/24')).toBe('10.244.2.0');
    expect(flannelDevice(nodes[0]!)).toEqual([
      'link add flannel.1 type vxlan id 1 dstport 8472 local 172.18.0.2 dev eth0 nolearning',
      'link set flannel.1 address 0e:6e:72:00:00:01 mtu 1450',
      'addr add 10.244.1.0/32 dev flannel.1',
      'link set flannel.1 up',
    ]);
  });
  it('route, permanent neighbour and FDB entry per peer, as flanneld writes them', () => {
    expect(flannelPeerEntries(nodes[0]!, nodes)).toEqual({
      ip: [
        'route add 10.244.2.0/24 via 10.244.2.0 dev flannel.1 onlink',
        'neigh add 10.244.2.0 lladdr 0e:6e:72:00:00:02 dev flannel.1 nud permanent',
      ],
      bridge: ['fdb append 0e:6e:72:00:00:02 dev flannel.1 dst 172.18.0.3'],
    });
  });
});

describe('scenario references for the new forms', () => {
  const base = (extra: string, expect = 'p: { outcome: ok, count: 2 }') => `
id: t
title: t
topology:
  cni: bridge
  nodes: [{ name: a, podCIDR: 10.244.1.0/24 }]
  pods: [{ name: client, node: a }, { name: web, node: a, serve: [{ http: 8080 }] }]
  services: [{ name: web, clusterIP: 10.96.0.20, ports: [{ port: 80, targetPort: 8080 }], endpoints: [web] }]
probes: [{ id: p, from: client, ${extra} download: { to: svc/web, port: 80, bytes: 100 } }]
baseline: { expect: { ${expect} } }
fault: { steps: [{ start: { node: a, component: kube-proxy, version: "1.15" } }], expect: { p: ok } }
fixes: [{ steps: [\${step}], expect: { p: ok }, checks: [{ id: c, on: fabric, background: true, cmd: tcpdump -i br0, matches: x, expect: { count: 0 } }] }]
`;
  const injector =
    '{ run: { on: pod/web, cmd: "{bin/inject-ahead} --iface eth0", background: true, expect: { prints: injected } } }';
  it('accepts repeat, download, background steps, fabric checks and kube-proxy start on the bridge shape', () => {
    expect(() => parseScenario(base('repeat: 2,').replace('${step}', injector), 't.yaml')).not.toThrow();
  });
  it('refuses count on a probe that is not repeated', () => {
    expect(() => parseScenario(base('').replace('${step}', injector), 't.yaml')).toThrow(
      /count, rate, otherwise and sameBackend need a repeated probe/,
    );
  });
  it('refuses a background step on an unknown pod', () => {
    expect(() =>
      parseScenario(base('repeat: 2,').replace('${step}', injector.replace('pod/web', 'pod/nope')), 't.yaml'),
    ).toThrow(/unknown pod/);
  });
  it('refuses the old probe `during` and says what to write instead', () => {
    expect(() =>
      parseScenario(base('repeat: 2, during: [{ on: pod/web, cmd: x }],').replace('${step}', injector), 't.yaml'),
    ).toThrow(/t\.yaml:\d+:\d+: probes\[0\]\.during: .*background: true/);
  });
});
