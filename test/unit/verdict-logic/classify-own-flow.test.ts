// src/observe/probes/classify.ts, ownFlow: the packets of the probe's own connection among all a capture
// holds (earlier connections, other hosts, a node's other addresses), named by its source port.
import { describe, expect, it } from 'vitest';
import { classifyCurl, ownFlow } from '../../../src/observe/probes/classify.ts';
import { client, icmp, SYN, tcp, vip, wire } from './wire.ts';

const SYN_ACK = tcp('10.96.0.20.80', '10.244.1.2.44186', 'S.');

describe('without the source port the client bound, the SYN to the target names the connection', () => {
  const others = [
    tcp('10.244.1.9.50000', '10.96.0.20.80', 'S'), // another host's SYN to the target
    tcp('10.244.1.2.39999', '10.96.0.20.80', 'F.'), // the tail of the client's earlier connection
    tcp('10.244.1.2.39998', '10.96.0.21.80', 'S'), // the client's SYN to another address
    tcp('10.244.1.2.39997', '10.96.0.20.81', 'S'), // the client's SYN to another port
  ];

  it("only the client's own SYN to the target's address and port, and what came back to its port", () => {
    const seen = wire(...others, SYN, SYN_ACK, tcp('10.96.0.20.80', '10.244.1.2.39998', 'R'));
    expect(ownFlow(seen, client, vip)).toEqual(wire(SYN, SYN_ACK));
  });

  it('no such SYN (connect() rewritten to another address): every packet', () => {
    const rewritten = wire(
      tcp('10.244.1.2.44186', '10.244.1.3.8080', 'S'),
      tcp('10.244.1.3.8080', '10.244.1.2.44186', 'S.'),
    );
    expect(ownFlow(rewritten, client, vip)).toEqual(rewritten);
    expect(classifyCurl({ exitCode: 0, stderr: '', httpCode: 200, body: 'web' }, rewritten, client, vip).reason).toBe(
      'HTTP 200; SYN-ACK from 10.244.1.3:8080',
    );
  });
});

describe('with the source port', () => {
  it("another connection of the client, and replies to it, are not the probe's; ICMP errors are kept", () => {
    const unreachable = icmp('172.18.0.3', '10.244.1.2', 'host 10.96.0.20 unreachable');
    const seen = wire(
      tcp('10.244.1.2.44187', '10.96.0.20.80', 'S'),
      tcp('10.244.2.9.80', '10.244.1.2.44187', 'S.'), // a foreign reply, to the other connection
      SYN,
      unreachable,
      SYN_ACK,
    );
    expect(ownFlow(seen, client, vip, 44186)).toEqual(wire(SYN, unreachable, SYN_ACK));
    expect(
      classifyCurl({ exitCode: 0, stderr: '', httpCode: 200, body: 'web', sourcePort: 44186 }, seen, client, vip)
        .outcome,
    ).toBe('ok');
  });

  it("a node's connection from another of its addresses (masqueraded on the way) is kept by its port, both ways", () => {
    const seen = wire(
      tcp('10.244.0.1.44186', '10.96.0.20.80', 'S'), // from the node's cni0 address
      tcp('10.96.0.20.80', '10.244.0.1.44186', 'S.'),
      tcp('10.244.0.1.44190', '10.96.0.20.80', 'S'), // that address's other connection
      tcp('10.244.1.2.50000', '10.244.5.5.44186', 'S'), // the client's other connection, to a server on that port
      tcp('10.244.5.5.44186', '10.244.1.2.50000', 'S.'),
    );
    expect(ownFlow(seen, client, vip, 44186)).toEqual(seen.slice(0, 2));
  });
});
