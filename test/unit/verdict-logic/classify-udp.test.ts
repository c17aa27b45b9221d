// src/observe/probes/classify.ts, UDP: what the agent's udp-query printed (the reply's source, and the name and
// client address the agent's UDP server answered with), backed by the capture, as for DNS.
import { describe, expect, it } from 'vitest';
import { classifyUdpAgent, type UdpAgentResult } from '../../../src/observe/probes/classify.ts';
import { udpWatch } from '../../../src/observe/probes/watch-filters.ts';
import { client, icmp, wire } from './wire.ts';

const result = (over: Partial<UdpAgentResult>): UdpAgentResult => ({
  outcome: 'ok',
  server: '10.96.0.30#80',
  replies: [],
  ...over,
});
const datagram = (from: string, to: string, length: number) =>
  `12:00:00.000001 IP ${from} > ${to}: UDP, length ${length}`;

describe('udp-query classification', () => {
  it('a reply from the server names the pod that answered and the client address it saw', () => {
    const seen = wire(
      datagram('10.244.1.2.20001', '10.96.0.30.80', 9),
      datagram('10.96.0.30.80', '10.244.1.2.20001', 28),
    );
    const reply = { from: '10.96.0.30#80', bytes: 28, servedBy: 'pod-server-1', clientAddress: '172.18.0.2:20001' };
    expect(classifyUdpAgent(result({ replies: [reply] }), seen, client)).toEqual({
      outcome: 'ok',
      reason:
        'pod-server-1 answered (it saw the client as 172.18.0.2:20001) from 10.96.0.30#80 (on the wire: 10.96.0.30.80 > 10.244.1.2.20001)',
      servedBy: 'pod-server-1',
      clientAddress: '172.18.0.2:20001',
      source: '10.96.0.30:80',
    });
  });

  it('a reply that names its server but not the client address says only who answered', () => {
    const reply = { from: '10.96.0.30#80', bytes: 20, servedBy: 'pod-server-1' };
    expect(classifyUdpAgent(result({ replies: [reply] })).reason).toBe('pod-server-1 answered from 10.96.0.30#80');
  });

  it('a reply that names no server is still an answer, from nobody named', () => {
    const c = classifyUdpAgent(result({ replies: [{ from: '10.96.0.30#80', bytes: 5 }] }));
    expect(c).toMatchObject({
      outcome: 'ok',
      reason: '5 bytes naming no server from 10.96.0.30#80',
      source: '10.96.0.30:80',
    });
    expect(c.servedBy).toBeUndefined();
    expect(c.clientAddress).toBeUndefined();
  });

  it('a reply from where the client never sent is an unexpected source, named as the wire saw it (from the target port)', () => {
    const reply = { from: '10.244.2.2#8080', bytes: 28, servedBy: 'pod-server-1', clientAddress: '10.244.1.2:20001' };
    const seen = wire(datagram('10.244.2.2.8080', '10.244.1.2.20001', 28));
    expect(classifyUdpAgent(result({ outcome: 'unexpected-source', replies: [reply] }), seen, client)).toEqual({
      outcome: 'unexpected-source',
      reason:
        'reply from unexpected source: 10.244.2.2#8080, expected 10.96.0.30#80 (on the wire: 10.244.2.2.8080 > 10.244.1.2.20001)',
      source: '10.244.2.2:8080',
    });
    expect(classifyUdpAgent(result({ outcome: 'unexpected-source', replies: [reply] })).reason).toBe(
      'reply from unexpected source: 10.244.2.2#8080, expected 10.96.0.30#80',
    );
  });

  it('cites the datagram the client read: not one from that source to another host, nor one from another source', () => {
    const reply = { from: '10.244.2.2#8080', bytes: 28 };
    const seen = wire(
      datagram('10.244.1.2.20001', '10.96.0.30.80', 9), // the client's own query
      '12:00:00.000001 IP 10.244.2.2.8080 > 10.244.1.2.20002: Flags [S.], seq 1, ack 1, win 502, length 0', // TCP
      datagram('10.244.2.2.8080', '10.244.1.9.20001', 28), // the same source, to another client
      datagram('10.244.2.3.8080', '10.244.1.2.20001', 28), // to the client, from another source
      datagram('10.244.2.2.8081', '10.244.1.2.20001', 28), // the same address, another port
      datagram('10.244.2.2.8080', '10.244.1.2.20001', 28), // the one it read
    );
    expect(classifyUdpAgent(result({ outcome: 'unexpected-source', replies: [reply] }), seen, client).reason).toBe(
      'reply from unexpected source: 10.244.2.2#8080, expected 10.96.0.30#80 (on the wire: 10.244.2.2.8080 > 10.244.1.2.20001)',
    );
  });

  it('an ICMP port-unreachable about the datagram is refused; no reply at all a timeout', () => {
    const rejected = wire(icmp('172.18.0.3', '10.244.1.2', '10.96.0.30 udp port 80 unreachable'));
    expect(classifyUdpAgent(result({ outcome: 'unreachable' }), rejected, client)).toEqual({
      outcome: 'refused',
      reason: 'ICMP port-unreachable (type 3 code 3) from 172.18.0.3; no reply from 10.96.0.30#80',
      source: '172.18.0.3',
    });
    expect(classifyUdpAgent(result({ outcome: 'timeout' }), [], client)).toEqual({
      outcome: 'timeout',
      reason: 'no reply from 10.96.0.30#80',
    });
  });
});

describe('the udp probe watches its own source port', () => {
  it('a fixed one, or the range each run takes a fresh one from, and ICMP', () => {
    expect(udpWatch(12345)).toEqual(['(udp', 'and', 'port', '12345', ')', 'or', 'icmp']);
    expect(udpWatch(undefined)).toEqual(['(udp', 'and', 'portrange', '20000-29999', ')', 'or', 'icmp']);
  });
});
