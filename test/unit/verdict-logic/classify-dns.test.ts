// src/observe/probes/classify.ts, DNS: the agent resolver's result, backed by the capture: a reply on the
// wire, an ICMP error about the query, or nothing.
import { describe, expect, it } from 'vitest';
import {
  classifyDnsAgent,
  udpReplyOnWire,
  icmpAboutQuery,
  icmpInsteadOfReply,
  type DnsAgentResult,
} from '../../../src/observe/probes/classify.ts';
import { client, icmp, udp, wire } from './wire.ts';

const dns = { ip: '10.96.0.10', port: 53 };
const QUERY = udp('10.244.1.2.40000', '10.96.0.10.53');
const result = (over: Partial<DnsAgentResult>): DnsAgentResult => ({
  outcome: 'ok',
  server: '10.96.0.10#53',
  replies: [],
  ...over,
});

describe('udpReplyOnWire', () => {
  it("the first datagram to the client from the server's port, or 53", () => {
    const seen = wire(QUERY, udp('10.96.0.10.5353', '10.244.1.2.40000'), udp('10.244.1.3.53', '10.244.1.2.40000'));
    expect(udpReplyOnWire(seen, client, { ip: '10.96.0.10', port: 5353 })).toBe(seen[1]);
    expect(udpReplyOnWire(seen, client, dns)).toBe(seen[2]);
    expect(udpReplyOnWire(seen.slice(2), client, { ip: '10.96.0.10', port: 5353 })).toBe(seen[2]);
  });

  it('not a datagram to another host or from another port, nor a TCP segment', () => {
    const seen = wire(
      udp('10.96.0.10.53', '10.244.1.9.40000'),
      udp('10.96.0.10.6000', '10.244.1.2.40000'),
      `12:00:00.000001 IP 10.96.0.10.53 > 10.244.1.2.40000: Flags [S.], seq 1, win 64240, length 0`,
    );
    expect(udpReplyOnWire(seen, client, dns)).toBeUndefined();
  });
});

describe('icmpAboutQuery', () => {
  it("a port-unreachable about the server's UDP port", () => {
    const seen = wire(QUERY, icmp('10.96.0.10', '10.244.1.2', '10.96.0.10 udp port 53 unreachable'));
    expect(icmpAboutQuery(seen, client, dns)).toBe(seen[1]);
  });

  it('a host-unreachable (no port named) about the server', () => {
    const seen = wire(icmp('10.244.1.1', '10.244.1.2', 'host 10.96.0.10 unreachable'));
    expect(icmpAboutQuery(seen, client, dns)).toBe(seen[0]);
  });

  it("not about another port, another protocol's port, or another address; not to another host", () => {
    const seen = wire(
      icmp('10.96.0.10', '10.244.1.2', '10.96.0.10 udp port 5353 unreachable'),
      icmp('10.96.0.10', '10.244.1.2', '10.96.0.10 tcp port 53 unreachable'),
      icmp('10.96.0.11', '10.244.1.2', 'host 10.96.0.11 unreachable'),
      icmp('10.244.1.1', '10.244.1.9', 'host 10.96.0.10 unreachable'),
    );
    expect(icmpAboutQuery(seen, client, dns)).toBeUndefined();
  });

  it("about where the client's query really went (socket LB), but not where another host's went", () => {
    const lb = icmp('172.18.0.2', '10.244.1.2', 'host 10.244.1.99 unreachable');
    expect(icmpAboutQuery(wire(udp('10.244.1.2.40000', '10.244.1.99.53'), lb), client, dns)?.icmp?.about).toBe(
      '10.244.1.99',
    );
    expect(icmpAboutQuery(wire(udp('10.244.1.9.40000', '10.244.1.99.53'), lb), client, dns)).toBeUndefined();
    // a TCP segment of the client is no query
    expect(
      icmpAboutQuery(
        wire(`12:00:00.000001 IP 10.244.1.2.40000 > 10.244.1.99.53: Flags [S], seq 1, win 64240, length 0`, lb),
        client,
        dns,
      ),
    ).toBeUndefined();
  });

  it('a port-unreachable about where the query went must name that port', () => {
    const seen = wire(
      udp('10.244.1.2.40000', '10.244.1.99.5353'),
      icmp('10.244.1.99', '10.244.1.2', '10.244.1.99 udp port 53 unreachable'),
    );
    expect(icmpAboutQuery(seen, client, dns)).toBeUndefined();
    const right = wire(
      udp('10.244.1.2.40000', '10.244.1.99.5353'),
      icmp('10.244.1.99', '10.244.1.2', '10.244.1.99 udp port 5353 unreachable'),
    );
    expect(icmpAboutQuery(right, client, dns)).toBe(right[1]);
  });
});

describe('icmpInsteadOfReply', () => {
  it('port-unreachable is refused; the reason names the ICMP and the server', () => {
    const [p] = wire(icmp('10.96.0.10', '10.244.1.2', '10.96.0.10 udp port 53 unreachable'));
    expect(icmpInsteadOfReply(p!, '10.96.0.10#53')).toEqual({
      outcome: 'refused',
      reason: 'ICMP port-unreachable (type 3 code 3) from 10.96.0.10; no reply from 10.96.0.10#53',
      source: '10.96.0.10',
    });
  });

  it('another code is unreachable; an ICMP about another address names it', () => {
    const [p] = wire(icmp('172.18.0.2', '10.244.1.2', 'host 10.244.1.99 unreachable'));
    expect(icmpInsteadOfReply(p!, '10.96.0.10#53')).toEqual({
      outcome: 'unreachable',
      reason: 'ICMP host-unreachable (type 3 code 1) from 172.18.0.2 about 10.244.1.99; no reply from 10.96.0.10#53',
      source: '172.18.0.2',
    });
  });
});

describe('classifyDnsAgent', () => {
  it('an answer from the server is ok, with its addresses; the wire gives its source when captured', () => {
    const replies = [{ from: '10.96.0.10#53', rcode: 0, answers: ['10.96.0.20', '10.96.0.21'] }];
    expect(classifyDnsAgent(result({ replies }))).toEqual({
      outcome: 'ok',
      reason: 'answer 10.96.0.20,10.96.0.21 from 10.96.0.10#53',
      source: '10.96.0.10:53',
      answers: ['10.96.0.20', '10.96.0.21'],
    });
    const seen = wire(QUERY, udp('10.96.0.10.53', '10.244.1.2.40000'));
    expect(classifyDnsAgent(result({ replies }), seen, client)).toMatchObject({
      reason: 'answer 10.96.0.20,10.96.0.21 from 10.96.0.10#53 (on the wire: 10.96.0.10.53 > 10.244.1.2.40000)',
      source: '10.96.0.10:53',
    });
  });

  it('the reply from the server is the one read, not the first; an empty answer names its rcode', () => {
    const replies = [
      { from: '10.244.1.3#53', rcode: 0, answers: ['1.1.1.1'] },
      { from: '10.96.0.10#53', rcode: 3, answers: [] },
    ];
    expect(classifyDnsAgent(result({ replies }))).toEqual({
      outcome: 'ok',
      reason: 'answer rcode 3 from 10.96.0.10#53',
      source: '10.96.0.10:53',
      answers: [],
    });
  });

  it('a reply from another source is unexpected-source, named as the wire saw it', () => {
    const r = result({ outcome: 'unexpected-source', replies: [{ from: '10.244.1.3#53', rcode: 0, answers: [] }] });
    expect(classifyDnsAgent(r, wire(udp('10.244.1.3.53', '10.244.1.2.40000')), client)).toEqual({
      outcome: 'unexpected-source',
      reason:
        'reply from unexpected source: 10.244.1.3#53, expected 10.96.0.10#53 (on the wire: 10.244.1.3.53 > 10.244.1.2.40000)',
      source: '10.244.1.3:53',
    });
  });

  it('no reply: a timeout, unless an ICMP about the query answered it', () => {
    expect(classifyDnsAgent(result({ outcome: 'timeout' }))).toEqual({
      outcome: 'timeout',
      reason: 'no reply from 10.96.0.10#53',
    });
    const refused = wire(QUERY, icmp('10.96.0.10', '10.244.1.2', '10.96.0.10 udp port 53 unreachable'));
    expect(classifyDnsAgent(result({ outcome: 'timeout' }), refused, client)).toMatchObject({
      outcome: 'refused',
      source: '10.96.0.10',
    });
  });

  it('stopped at an ICMP error: the capture must hold it, or the outcome is an error', () => {
    const host = wire(icmp('10.244.1.1', '10.244.1.2', 'host 10.96.0.10 unreachable'));
    expect(classifyDnsAgent(result({ outcome: 'unreachable' }), host, client)).toMatchObject({
      outcome: 'unreachable',
      source: '10.244.1.1',
    });
    expect(classifyDnsAgent(result({ outcome: 'unreachable' }), [], client)).toEqual({
      outcome: 'error',
      reason: 'the query was stopped at an ICMP error the capture does not hold; no reply from 10.96.0.10#53',
    });
  });

  it('a server named without a port is on 53', () => {
    const refused = wire(icmp('10.96.0.10', '10.244.1.2', '10.96.0.10 udp port 53 unreachable'));
    expect(classifyDnsAgent(result({ outcome: 'timeout', server: '10.96.0.10' }), refused, client).outcome).toBe(
      'refused',
    );
    expect(classifyDnsAgent(result({ outcome: 'timeout', server: '10.96.0.10#5353' }), refused, client).outcome).toBe(
      'timeout',
    );
  });
});
