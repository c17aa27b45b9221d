import { describe, expect, it } from 'vitest';
import { classifyCurl, classifyDnsAgent, icmpAboutQuery } from '../../src/observe/probes/classify.ts';
import { parseTcpdumpLine, type Packet } from '../../src/observe/probes/packet-watch.ts';

const vip = { ip: '10.96.0.20', port: 80 };
const client = '10.244.1.2';
const packets = (lines: string[]) => lines.map((l) => parseTcpdumpLine(l)!) as Packet[];
const curl = (exitCode: number, stderr = '', httpCode = 0, body = '') => ({ exitCode, stderr, httpCode, body });

describe('curl outcome classification', () => {
  it('ok names the pod that answered', () => {
    expect(classifyCurl(curl(0, '', 200, 'web\n'), [], client, vip)).toMatchObject({ outcome: 'ok', servedBy: 'web' });
  });
  it('an HTTP error status is a wrong answer', () => {
    expect(classifyCurl(curl(0, '', 503), [], client, vip).outcome).toBe('wrong-answer');
  });
  it('maps curl exit codes to timeout, refused, unreachable, reset', () => {
    expect(
      classifyCurl(curl(28, 'curl: (28) Connection timed out after 1001 milliseconds'), [], client, vip).outcome,
    ).toBe('timeout');
    expect(
      classifyCurl(curl(7, 'curl: (7) Failed to connect to 10.96.0.20 port 80: Connection refused'), [], client, vip)
        .outcome,
    ).toBe('refused');
    expect(classifyCurl(curl(7, 'curl: (7) Failed to connect: No route to host'), [], client, vip).outcome).toBe(
      'unreachable',
    );
    expect(classifyCurl(curl(56, 'curl: (56) Recv failure: Connection reset by peer'), [], client, vip).outcome).toBe(
      'reset',
    );
    expect(classifyCurl(curl(6, 'curl: (6) Could not resolve host'), [], client, vip).outcome).toBe('error');
  });
  it('a SYN-ACK from an address the client never contacted is an unexpected source, with the client RST', () => {
    const seen = packets([
      '12:00:00.000001 IP 10.244.1.2.44762 > 10.96.0.20.80: Flags [S], seq 1, win 64240, length 0',
      '12:00:00.000002 IP 10.244.1.3.8080 > 10.244.1.2.44762: Flags [S.], seq 9, ack 2, win 65160, length 0',
      '12:00:00.000003 IP 10.244.1.2.44762 > 10.244.1.3.8080: Flags [R], seq 2, win 0, length 0',
    ]);
    const c = classifyCurl(curl(28, 'curl: (28) Connection timed out'), seen, client, vip);
    expect(c).toMatchObject({ outcome: 'unexpected-source', source: '10.244.1.3:8080' });
    expect(c.reason).toContain('client answered RST to 10.244.1.3:8080');
  });
  it('a SYN-ACK from the address contacted is not foreign', () => {
    const seen = packets([
      '12:00:00.000002 IP 10.96.0.20.80 > 10.244.1.2.44762: Flags [S.], seq 9, ack 2, win 65160, length 0',
    ]);
    expect(classifyCurl(curl(28, 'timed out'), seen, client, vip).outcome).toBe('timeout');
  });
});

describe("a node's capture: the probe is judged on its own connection only", () => {
  // the control-plane node's host network: kubelet's connections to the API server on the same address
  const node = '172.17.0.2';
  const apiSyn = `12:00:00.000010 IP ${node}.51234 > ${node}.6443: Flags [S], seq 7, win 65495, length 0`;
  const apiSynAck = `12:00:00.000011 IP ${node}.6443 > ${node}.51234: Flags [S.], seq 8, ack 8, win 65483, length 0`;
  const probeSyn = (port: number) =>
    `12:00:00.000020 IP ${node}.${port} > 10.96.0.20.80: Flags [S], seq 1, win 64240, length 0`;
  const reject = `12:00:00.000021 IP ${node} > ${node}: ICMP 10.96.0.20 tcp port 80 unreachable, length 68`;
  const refused = curl(7, 'curl: (7) Failed to connect to 10.96.0.20 port 80: Connection refused');
  const orders: [string, (port: number) => string[]][] = [
    ['before the probe', (port) => [apiSyn, apiSynAck, probeSyn(port), reject]],
    ['between its SYN and the answer', (port) => [probeSyn(port), apiSyn, apiSynAck, reject]],
  ];
  for (const [where, lines] of orders) {
    it(`another connection's handshake ${where} is no answer to the probe (its bound port)`, () => {
      const c = classifyCurl({ ...refused, sourcePort: 20_000 }, packets(lines(20_000)), node, vip);
      expect(c).toMatchObject({ outcome: 'refused', source: node });
      expect(c.reason).toContain('ICMP port-unreachable');
    });
    it(`another connection's handshake ${where} is no answer to the probe (its first SYN to the destination)`, () => {
      expect(classifyCurl(refused, packets(lines(40_000)), node, vip)).toMatchObject({ outcome: 'refused' });
    });
  }
  /** The probe's SYN from port 20000, the API server's handshake, then a SYN-ACK to the probe from `from`. */
  const answeredFrom = (from: string) =>
    packets([
      probeSyn(20_000),
      apiSyn,
      apiSynAck,
      `12:00:00.000030 IP ${from} > ${node}.20000: Flags [S.], seq 9, ack 2, win 65160, length 0`,
    ]);
  it("an answered probe's source is its own SYN-ACK's, not the API server's before it", () => {
    const c = classifyCurl(
      { ...curl(0, '', 200, 'web'), sourcePort: 20_000 },
      answeredFrom('10.96.0.20.80'),
      node,
      vip,
    );
    expect(c).toMatchObject({ outcome: 'ok', source: '10.96.0.20:80' });
  });
  it('a SYN-ACK that missed its reverse NAT still reaches the probe: it answers its port', () => {
    const c = classifyCurl(
      { ...curl(28, 'timed out'), sourcePort: 20_000 },
      answeredFrom('10.244.1.3.8080'),
      node,
      vip,
    );
    expect(c).toMatchObject({ outcome: 'unexpected-source', source: '10.244.1.3:8080' });
  });
});

describe('DNS agent classification', () => {
  const server = '10.96.0.10#53';
  it('a reply from the pod IP instead of the VIP is named exactly', () => {
    const c = classifyDnsAgent({
      outcome: 'unexpected-source',
      server,
      replies: [{ from: '10.244.1.3#53', rcode: 0, answers: ['10.96.0.10'] }],
    });
    expect(c).toMatchObject({
      outcome: 'unexpected-source',
      source: '10.244.1.3:53',
      reason: 'reply from unexpected source: 10.244.1.3#53, expected 10.96.0.10#53',
    });
  });
  it('no reply is a timeout; an answer is recorded for the expectation to compare', () => {
    expect(classifyDnsAgent({ outcome: 'timeout', server, replies: [] }).outcome).toBe('timeout');
    expect(
      classifyDnsAgent({ outcome: 'ok', server, replies: [{ from: server, rcode: 0, answers: ['1.2.3.4'] }] }),
    ).toMatchObject({ outcome: 'ok', answers: ['1.2.3.4'] });
  });
  it('an ICMP port-unreachable about the query ends it as refused, another unreachable code as unreachable', () => {
    const refused = packets([
      '12:00:00.000001 IP 10.96.0.10 > 10.244.1.2: ICMP 10.96.0.10 udp port 53 unreachable, length 68',
    ]);
    expect(icmpAboutQuery(refused, client, { ip: '10.96.0.10', port: 53 })).toBeDefined();
    expect(classifyDnsAgent({ outcome: 'unreachable', server, replies: [] }, refused, client)).toMatchObject({
      outcome: 'refused',
      source: '10.96.0.10',
    });
    const host = packets(['12:00:00.000001 IP 10.244.1.1 > 10.244.1.2: ICMP host 10.96.0.10 unreachable, length 68']);
    expect(classifyDnsAgent({ outcome: 'unreachable', server, replies: [] }, host, client).outcome).toBe('unreachable');
    // stopped without the ICMP in the capture: no verdict from a guess
    expect(classifyDnsAgent({ outcome: 'unreachable', server, replies: [] }, [], client).outcome).toBe('error');
  });
  it('under socket LB, an ICMP about where the query actually went answers it too', () => {
    const rewritten = packets([
      '12:00:00.000001 IP 10.244.1.2.54899 > 10.244.1.99.53: 7766+ A? web.default.svc.cluster.local. (47)',
      '12:00:00.150000 IP 172.18.0.2 > 10.244.1.2: ICMP host 10.244.1.99 unreachable, length 68',
    ]);
    expect(icmpAboutQuery(rewritten, client, { ip: '10.96.0.10', port: 53 })).toBeDefined();
    expect(icmpAboutQuery(rewritten.slice(1), client, { ip: '10.96.0.10', port: 53 })).toBeUndefined(); // no query went there
    expect(classifyDnsAgent({ outcome: 'unreachable', server, replies: [] }, rewritten, client)).toMatchObject({
      outcome: 'unreachable',
      reason: 'ICMP host-unreachable (type 3 code 1) from 172.18.0.2 about 10.244.1.99; no reply from 10.96.0.10#53',
    });
  });
  it('an ICMP about another address or port does not end the query', () => {
    const other = packets([
      '12:00:00.000001 IP 10.96.0.11 > 10.244.1.2: ICMP 10.96.0.11 udp port 53 unreachable, length 68',
      '12:00:00.000002 IP 10.96.0.10 > 10.244.1.2: ICMP 10.96.0.10 udp port 5353 unreachable, length 68',
    ]);
    expect(icmpAboutQuery(other, client, { ip: '10.96.0.10', port: 53 })).toBeUndefined();
    // the resolver's own verdict: a timeout stays a timeout, not `refused` from another flow's error
    expect(classifyDnsAgent({ outcome: 'timeout', server, replies: [] }, other, client).outcome).toBe('timeout');
  });
});
