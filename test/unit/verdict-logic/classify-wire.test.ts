// src/observe/probes/classify.ts, the packet readers: who answered the client's SYN, where the SYN went,
// and replies or segments that missed their reverse NAT.
import { describe, expect, it } from 'vitest';
import {
  connectAnswer,
  foreignReply,
  foreignSegment,
  synAckSource,
  synDestination,
} from '../../../src/observe/probes/classify.ts';
import { client, icmp, SYN, tcp, udp, vip, wire } from './wire.ts';

describe("synDestination: where the client's first SYN went", () => {
  it('the first SYN from the client, as IP:PORT', () => {
    expect(synDestination(wire(SYN, tcp('10.244.1.2.44187', '10.244.1.3.8080', 'S')), client)).toBe('10.96.0.20:80');
  });

  it("a SYN-ACK the client sends, or a SYN another host sends, is not the client's SYN", () => {
    expect(
      synDestination(
        wire(tcp('10.244.1.2.80', '10.244.1.9.5000', 'S.'), tcp('10.244.1.9.5000', '10.96.0.20.80', 'S')),
        client,
      ),
    ).toBeUndefined();
  });

  it('no SYN captured: undefined', () => {
    expect(synDestination([], client)).toBeUndefined();
  });
});

describe('synAckSource: who really answered the connection', () => {
  it('the source of the first SYN-ACK to the client', () => {
    expect(
      synAckSource(
        wire(SYN, tcp('10.244.1.3.8080', '10.244.1.2.44186', 'S.'), tcp('10.96.0.20.80', '10.244.1.2.44186', 'S.')),
        client,
      ),
    ).toBe('10.244.1.3:8080');
  });

  it('an ECN SYN-ACK counts too', () => {
    expect(synAckSource(wire(tcp('10.96.0.20.80', '10.244.1.2.44186', 'S.E')), client)).toBe('10.96.0.20:80');
  });

  it('a SYN-ACK to another host, and segments that are no SYN-ACK, are not', () => {
    expect(
      synAckSource(
        wire(
          tcp('10.244.1.3.8080', '10.244.1.9.44186', 'S.'),
          tcp('10.96.0.20.80', '10.244.1.2.44186', '.'),
          udp('10.96.0.10.53', '10.244.1.2.5353'),
        ),
        client,
      ),
    ).toBeUndefined();
  });
});

describe('foreignReply: a reply from somewhere the client never sent to', () => {
  it("a SYN-ACK from the pod instead of the Service, and the client's RST to it", () => {
    const seen = wire(
      SYN,
      tcp('10.244.1.3.8080', '10.244.1.2.44186', 'S.'),
      tcp('10.244.1.2.44186', '10.244.1.3.8080', 'R'),
    );
    expect(foreignReply(seen, client, vip)).toEqual({ reply: seen[1], clientReset: true });
  });

  it('a SYN-ACK from the address and port connected to is no foreign reply', () => {
    expect(foreignReply(wire(SYN, tcp('10.96.0.20.80', '10.244.1.2.44186', 'S.')), client, vip)).toBeUndefined();
  });

  it('the same address from another port, or another address on the same port, is foreign', () => {
    expect(foreignReply(wire(tcp('10.96.0.20.8080', '10.244.1.2.44186', 'S.')), client, vip)?.reply.sport).toBe(8080);
    expect(foreignReply(wire(tcp('10.96.0.21.80', '10.244.1.2.44186', 'S.')), client, vip)?.reply.src).toBe(
      '10.96.0.21',
    );
  });

  it('only a SYN-ACK (ECN too) to the client counts, not other segments, ICMP, or packets to another host', () => {
    const other = wire(
      icmp('10.244.1.1', '10.244.1.2', 'host 10.96.0.20 unreachable'),
      tcp('10.244.1.3.8080', '10.244.1.2.44186', 'R.'),
      tcp('10.244.1.3.8080', '10.244.1.2.44186', '.'),
      tcp('10.244.1.3.8080', '10.244.1.9.44186', 'S.'),
    );
    expect(foreignReply(other, client, vip)).toBeUndefined();
    expect(foreignReply(wire(tcp('10.244.1.3.8080', '10.244.1.2.44186', 'S.E')), client, vip)?.reply.flags).toBe('S.E');
  });

  it('without a client RST back to that reply, clientReset is false', () => {
    const rsts = [
      tcp('10.244.1.2.44186', '10.244.1.3.9090', 'R'), // to another port of that host
      tcp('10.244.1.2.44186', '10.244.1.4.8080', 'R'), // to another host
      tcp('10.244.1.9.44186', '10.244.1.3.8080', 'R'), // from another host
      tcp('10.244.1.2.44186', '10.244.1.3.8080', '.'), // an ACK, not a RST
    ];
    expect(
      foreignReply(wire(tcp('10.244.1.3.8080', '10.244.1.2.44186', 'S.'), ...rsts), client, vip)?.clientReset,
    ).toBe(false);
  });

  it('a client RST with the ACK flag counts as its RST', () => {
    expect(
      foreignReply(
        wire(tcp('10.244.1.3.8080', '10.244.1.2.44186', 'S.'), tcp('10.244.1.2.44186', '10.244.1.3.8080', 'R.')),
        client,
        vip,
      )?.clientReset,
    ).toBe(true);
  });

  describe("UDP (DNS): a datagram from another address on the server's port or port 53", () => {
    const server = { ip: '10.96.0.10', port: 5353 };
    it("from the pod on the server's port, or on 53, is foreign", () => {
      expect(foreignReply(wire(udp('10.244.1.3.5353', '10.244.1.2.40000')), client, server)?.reply.src).toBe(
        '10.244.1.3',
      );
      expect(foreignReply(wire(udp('10.244.1.3.53', '10.244.1.2.40000')), client, server)?.reply.sport).toBe(53);
    });
    it('from another port, or from the server itself, is not', () => {
      expect(
        foreignReply(
          wire(udp('10.244.1.3.6000', '10.244.1.2.40000'), udp('10.96.0.10.5353', '10.244.1.2.40000')),
          client,
          server,
        ),
      ).toBeUndefined();
    });
    it('the client sending on to it again is no RST', () => {
      expect(
        foreignReply(
          wire(udp('10.244.1.3.53', '10.244.1.2.40000'), udp('10.244.1.2.40000', '10.244.1.3.53')),
          client,
          server,
        )?.clientReset,
      ).toBe(false);
    });
  });
});

describe('connectAnswer: what answered the SYN', () => {
  it('a SYN-ACK to the SYN means it connected: no answer to report, whatever came after', () => {
    expect(
      connectAnswer(
        wire(SYN, tcp('10.96.0.20.80', '10.244.1.2.44186', 'S.'), tcp('10.96.0.20.80', '10.244.1.2.44186', 'R.')),
        client,
      ),
    ).toBeUndefined();
    expect(
      connectAnswer(
        wire(SYN, tcp('10.96.0.20.80', '10.244.1.2.44186', 'S.E'), tcp('10.96.0.20.80', '10.244.1.2.44186', 'R.')),
        client,
      ),
    ).toBeUndefined();
  });

  it('a SYN-ACK seen without its SYN counts as connected too', () => {
    expect(
      connectAnswer(
        wire(
          tcp('10.96.0.20.80', '10.244.1.2.44186', 'S.'),
          icmp('10.244.1.1', '10.244.1.2', 'host 10.96.0.20 unreachable'),
        ),
        client,
      ),
    ).toBeUndefined();
  });

  it("a RST to the SYN's port is refused, naming its sender and the SYN", () => {
    expect(connectAnswer(wire(SYN, tcp('10.96.0.20.80', '10.244.1.2.44186', 'R.')), client)).toEqual({
      outcome: 'refused',
      reason: 'RST from 10.96.0.20:80 in answer to the SYN to 10.96.0.20:80',
      source: '10.96.0.20:80',
    });
  });

  it('a SYN-ACK or RST for another connection of the client is passed over', () => {
    const seen = wire(
      SYN,
      tcp('10.96.0.20.80', '10.244.1.2.50000', 'S.'),
      tcp('10.96.0.20.80', '10.244.1.2.50001', 'R'),
      tcp('10.96.0.20.80', '10.244.1.2.44186', 'R'),
    );
    expect(connectAnswer(seen, client)).toMatchObject({ outcome: 'refused', source: '10.96.0.20:80' });
    expect(connectAnswer(seen.slice(0, 3), client)).toBeUndefined();
  });

  it("the SYN is the client's own first TCP SYN, not another host's or another packet of the client", () => {
    const rst = tcp('10.96.0.20.80', '10.244.1.2.44186', 'R');
    expect(connectAnswer(wire(tcp('10.244.1.9.5000', '10.96.0.20.80', 'S'), SYN, rst), client)?.outcome).toBe(
      'refused',
    );
    expect(connectAnswer(wire(udp('10.244.1.2.40000', '10.96.0.10.53'), SYN, rst), client)?.outcome).toBe('refused');
  });

  it('a RST without a captured SYN answers nothing we know of', () => {
    expect(connectAnswer(wire(tcp('10.96.0.20.80', '10.244.1.2.44186', 'R')), client)).toBeUndefined();
  });

  it('a segment that is neither SYN-ACK nor RST is no answer', () => {
    expect(connectAnswer(wire(SYN, tcp('10.96.0.20.80', '10.244.1.2.44186', 'P.')), client)).toBeUndefined();
  });

  it('packets to other hosts are passed over', () => {
    const seen = wire(
      SYN,
      tcp('10.96.0.20.80', '10.244.1.9.44186', 'R'),
      icmp('10.244.1.1', '10.244.1.9', 'host 10.96.0.20 unreachable'),
      tcp('10.96.0.20.80', '10.244.1.9.44186', 'S.'),
    );
    expect(connectAnswer(seen, client)).toBeUndefined();
  });

  it('an ICMP port-unreachable is refused, naming the port; another unreachable code is unreachable', () => {
    expect(
      connectAnswer(wire(SYN, icmp('10.244.1.1', '10.244.1.2', '10.96.0.20 tcp port 80 unreachable')), client),
    ).toEqual({
      outcome: 'refused',
      reason: 'ICMP port-unreachable (type 3 code 3) from 10.244.1.1 about 10.96.0.20 tcp port 80',
      source: '10.244.1.1',
    });
    expect(connectAnswer(wire(SYN, icmp('10.99.0.2', '10.244.1.2', 'host 10.96.0.20 unreachable')), client)).toEqual({
      outcome: 'unreachable',
      reason: 'ICMP host-unreachable (type 3 code 1) from 10.99.0.2 about 10.96.0.20',
      source: '10.99.0.2',
    });
  });

  it('the first answer counts', () => {
    expect(
      connectAnswer(
        wire(
          SYN,
          icmp('10.99.0.2', '10.244.1.2', 'host 10.96.0.20 unreachable'),
          tcp('10.96.0.20.80', '10.244.1.2.44186', 'R'),
        ),
        client,
      )?.outcome,
    ).toBe('unreachable');
  });
});

describe('foreignSegment: any TCP segment from an address:port the client never connected to', () => {
  const data = tcp('10.244.1.3.8080', '10.244.1.2.44186', 'P.');

  it("a data segment from the pod, and the client's RST back to it on the same connection", () => {
    const seen = wire(
      SYN,
      tcp('10.96.0.20.80', '10.244.1.2.44186', 'S.'),
      data,
      tcp('10.244.1.2.44186', '10.244.1.3.8080', 'R'),
    );
    expect(foreignSegment(seen, client, vip)).toEqual({ packet: seen[2], clientReset: true });
  });

  it('segments from the Service itself are not foreign; another port or address is', () => {
    expect(foreignSegment(wire(tcp('10.96.0.20.80', '10.244.1.2.44186', 'P.')), client, vip)).toBeUndefined();
    expect(foreignSegment(wire(tcp('10.96.0.20.8080', '10.244.1.2.44186', 'P.')), client, vip)?.packet.sport).toBe(
      8080,
    );
    expect(foreignSegment(wire(tcp('10.96.0.21.80', '10.244.1.2.44186', 'P.')), client, vip)?.packet.src).toBe(
      '10.96.0.21',
    );
  });

  it('a foreign RST (with or without ACK), a datagram, or a segment to another host is not what it looks for', () => {
    const seen = wire(
      tcp('10.244.1.3.8080', '10.244.1.2.44186', 'R'),
      tcp('10.244.1.3.8080', '10.244.1.2.44186', 'R.'),
      udp('10.244.1.3.8080', '10.244.1.2.44186'),
      tcp('10.244.1.3.8080', '10.244.1.9.44186', 'P.'),
    );
    expect(foreignSegment(seen, client, vip)).toBeUndefined();
  });

  it("the client's RST must go back on that very connection", () => {
    const others = [
      tcp('10.244.1.2.50000', '10.244.1.3.8080', 'R'), // from another port of the client
      tcp('10.244.1.2.44186', '10.244.1.3.9090', 'R'), // to another port
      tcp('10.244.1.2.44186', '10.244.1.4.8080', 'R'), // to another host
      tcp('10.244.1.9.44186', '10.244.1.3.8080', 'R'), // from another host
      tcp('10.244.1.2.44186', '10.244.1.3.8080', '.'), // not a RST
      udp('10.244.1.2.44186', '10.244.1.3.8080'), // not TCP
    ];
    expect(foreignSegment(wire(data, ...others), client, vip)?.clientReset).toBe(false);
    expect(foreignSegment(wire(data, tcp('10.244.1.2.44186', '10.244.1.3.8080', 'R.')), client, vip)?.clientReset).toBe(
      true,
    );
  });
});
