// src/observe/probes/classify.ts: only an answer the client's socket acts on makes the outcome: a RST from
// where its SYN went (as the client sees it, after reverse NAT), an ICMP error about that address. Others
// are named in the reason (ignoredAnswers), never the outcome.
import { describe, expect, it } from 'vitest';
import { classifyCurl, connectAnswer, ignoredAnswers } from '../../../src/observe/probes/classify.ts';
import { client, icmp, SYN, tcp, vip, wire } from './wire.ts';

const UNNATED_RST = tcp('10.244.1.3.8080', '10.244.1.2.44186', 'R.');
const IGNORED_RST = 'RST from 10.244.1.3:8080 ignored by the client: not from 10.96.0.20:80, where its SYN went';

describe("connectAnswer: the client's own tuple", () => {
  it('a RST from the backend (it missed its reverse NAT) is no answer to the SYN to the Service', () => {
    expect(connectAnswer(wire(SYN, UNNATED_RST), client)).toBeUndefined();
  });

  it("nor a RST from the Service's address on another port, or from another address on its port", () => {
    expect(connectAnswer(wire(SYN, tcp('10.96.0.20.8080', '10.244.1.2.44186', 'R')), client)).toBeUndefined();
    expect(connectAnswer(wire(SYN, tcp('10.244.1.9.80', '10.244.1.2.44186', 'R')), client)).toBeUndefined();
  });

  it("the SYN is the client's first TCP SYN, not an earlier segment of another of its connections", () => {
    const earlier = tcp('10.244.1.2.50000', '10.96.0.20.80', '.');
    expect(connectAnswer(wire(earlier, SYN, tcp('10.96.0.20.80', '10.244.1.2.44186', 'R')), client)?.outcome).toBe(
      'refused',
    );
    expect(ignoredAnswers(wire(earlier, SYN, UNNATED_RST), client)).toEqual([IGNORED_RST]);
  });

  it('a RST from where the SYN went still is', () => {
    expect(connectAnswer(wire(SYN, UNNATED_RST, tcp('10.96.0.20.80', '10.244.1.2.44186', 'R')), client)).toMatchObject({
      outcome: 'refused',
      source: '10.96.0.20:80',
    });
  });

  it('an ICMP error counts only about where the SYN went: that address, and its TCP port when quoted', () => {
    expect(
      connectAnswer(wire(SYN, icmp('10.244.1.1', '10.244.1.2', 'host 10.244.1.3 unreachable')), client),
    ).toBeUndefined();
    expect(
      connectAnswer(wire(SYN, icmp('10.244.1.1', '10.244.1.2', '10.96.0.20 tcp port 8080 unreachable')), client),
    ).toBeUndefined();
    expect(
      connectAnswer(wire(SYN, icmp('10.244.1.1', '10.244.1.2', '10.96.0.20 udp port 80 unreachable')), client),
    ).toBeUndefined();
    expect(
      connectAnswer(wire(SYN, icmp('10.244.1.1', '10.244.1.2', '10.96.0.20 tcp port 80 unreachable')), client)?.outcome,
    ).toBe('refused');
    expect(
      connectAnswer(wire(SYN, icmp('10.244.1.1', '10.244.1.2', 'net 10.96.0.20 unreachable')), client)?.outcome,
    ).toBe('unreachable');
  });

  it('without a captured SYN, any ICMP error to the client answers', () => {
    expect(connectAnswer(wire(icmp('10.244.1.1', '10.244.1.2', 'host 10.244.1.3 unreachable')), client)).toMatchObject({
      outcome: 'unreachable',
      source: '10.244.1.1',
    });
  });
});

describe('ignoredAnswers', () => {
  it('a RST the client did not act on, named with where the SYN went', () => {
    expect(ignoredAnswers(wire(SYN, UNNATED_RST), client)).toEqual([IGNORED_RST]);
    expect(ignoredAnswers(wire(SYN, tcp('10.96.0.20.8080', '10.244.1.2.44186', 'R')), client)).toEqual([
      'RST from 10.96.0.20:8080 ignored by the client: not from 10.96.0.20:80, where its SYN went',
    ]);
    expect(ignoredAnswers(wire(SYN, tcp('10.244.1.9.80', '10.244.1.2.44186', 'R')), client)).toEqual([
      'RST from 10.244.1.9:80 ignored by the client: not from 10.96.0.20:80, where its SYN went',
    ]);
  });

  it('an ICMP error about another address', () => {
    expect(ignoredAnswers(wire(SYN, icmp('10.244.1.1', '10.244.1.2', 'host 10.244.1.3 unreachable')), client)).toEqual([
      'ICMP host-unreachable from 10.244.1.1 about 10.244.1.3 ignored by the client: its SYN went to 10.96.0.20:80',
    ]);
  });

  it('only the first', () => {
    expect(
      ignoredAnswers(wire(SYN, UNNATED_RST, icmp('10.244.1.1', '10.244.1.2', 'host 10.244.1.3 unreachable')), client),
    ).toEqual([IGNORED_RST]);
  });

  it('not answers it acted on, segments that are no RST, RSTs for its other connections, packets to other hosts', () => {
    const seen = wire(
      SYN,
      tcp('10.96.0.20.80', '10.244.1.2.44186', 'R'),
      icmp('10.244.1.1', '10.244.1.2', 'host 10.96.0.20 unreachable'),
      tcp('10.244.1.3.8080', '10.244.1.2.44186', 'S.'),
      tcp('10.244.1.3.8080', '10.244.1.2.50000', 'R'),
      tcp('10.244.1.3.8080', '10.244.1.9.44186', 'R'),
      icmp('10.244.1.1', '10.244.1.9', 'host 10.244.1.3 unreachable'),
      `12:00:00.000001 IP 10.244.1.3.53 > 10.244.1.2.44186: 7766 1/0/0 A 10.96.0.20 (63)`,
    );
    expect(ignoredAnswers(seen, client)).toEqual([]);
  });

  it("nothing without the client's SYN (another host's SYN is not it)", () => {
    expect(ignoredAnswers(wire(UNNATED_RST), client)).toEqual([]);
    expect(
      ignoredAnswers(
        wire(tcp('10.244.1.9.44186', '10.96.0.20.80', 'S'), tcp('10.244.1.2.80', '10.244.1.9.1', 'S.'), UNNATED_RST),
        client,
      ),
    ).toEqual([]);
  });
});

describe('classifyCurl: the outcome the client experienced, what it ignored named', () => {
  it('curl timed out after an un-NATed RST: timeout, the RST named (issue 20)', () => {
    expect(
      classifyCurl(
        { exitCode: 28, stderr: 'curl: (28) Connection timed out after 1000 milliseconds', httpCode: 0, body: '' },
        wire(SYN, UNNATED_RST),
        client,
        vip,
      ),
    ).toEqual({
      outcome: 'timeout',
      reason: `curl: (28) Connection timed out after 1000 milliseconds; the SYN got no answer it acted on; ${IGNORED_RST}`,
    });
  });

  it('connected, then no HTTP answer: the ignored RST follows the connect time', () => {
    expect(
      classifyCurl(
        { exitCode: 28, stderr: '', httpCode: 0, body: '', connectSeconds: 0.001 },
        wire(SYN, UNNATED_RST),
        client,
        vip,
      ),
    ).toEqual({
      outcome: 'timeout',
      reason: `connected in 1.0 ms, then no HTTP response (curl exit 28); ${IGNORED_RST}`,
    });
  });

  it('no SYN seen: nothing to ignore', () => {
    expect(classifyCurl({ exitCode: 28, stderr: '', httpCode: 0, body: '' }, wire(UNNATED_RST), client, vip)).toEqual({
      outcome: 'timeout',
      reason: 'curl exit 28',
    });
  });
});
