// A probe's flow is followed through every NAT on its way: conntrack's reply tuple, read backwards, is the
// packet a node sent on for the client, whatever order the nodes' events came in.
import { describe, expect, it } from 'vitest';
import { ProbeFlow } from '../../src/model/probe-flow.ts';
import type { TraceEvent, TracePacket } from '../../src/model/trace-events.ts';

type Conntrack = Extract<TraceEvent, { kind: 'conntrack' }>;

const tcp = (src: string, sport: number, dst: string, dport: number, flags?: string): TracePacket => ({
  proto: 'tcp',
  src,
  sport,
  dst,
  dport,
  ...(flags ? { flags } : {}),
});
const entry = (node: string, packet: TracePacket, reply: TracePacket): Conntrack => ({
  kind: 'conntrack',
  at: 0,
  node,
  event: 'NEW',
  state: 'SYN_SENT',
  packet,
  reply,
  unreplied: true,
  line: `[NEW] ${node}`,
});

// the client's SYN to node-b's NodePort, masqueraded by node-a; node-b DNATs it to a pod
const client = tcp('10.244.1.3', 40000, '172.18.0.3', 30080);
const masqueraded = entry('node-a', client, tcp('172.18.0.3', 30080, '172.18.0.2', 2934));
const dnatted = entry(
  'node-b',
  tcp('172.18.0.2', 2934, '172.18.0.3', 30080),
  tcp('10.244.2.5', 8080, '172.18.0.2', 2934),
);

describe('ProbeFlow', () => {
  it("learns the tuple a node's masquerade sent on, and each node after it, whatever order the events came in", () => {
    for (const events of [
      [masqueraded, dnatted],
      [dnatted, masqueraded],
    ]) {
      const flow = ProbeFlow.of('10.244.1.3', events);
      expect(flow.translations.map((t) => [t.node, t.tuple, t.clientPort])).toEqual([
        ['node-a', tcp('172.18.0.2', 2934, '172.18.0.3', 30080), 40000],
        ['node-b', tcp('172.18.0.2', 2934, '10.244.2.5', 8080), 40000],
      ]);
      expect(flow.translations[1]!.from).toBe(flow.translations[0]);
    }
  });

  it('places packets under any of its addresses, either way, and ICMP errors about them', () => {
    const flow = ProbeFlow.of('10.244.1.3', [masqueraded, dnatted]);
    const onNodeB = tcp('172.18.0.2', 2934, '172.18.0.3', 30080, 'SYN');
    expect(flow.outbound(onNodeB)).toMatchObject({ clientPort: 40000, translated: { node: 'node-a' } });
    expect(flow.inbound(tcp('10.244.2.5', 8080, '172.18.0.2', 2934, 'SYN ACK'))).toMatchObject({ clientPort: 40000 });
    expect(flow.outbound(tcp('10.244.2.5', 8080, '172.18.0.2', 2934))).toBeUndefined();
    const icmp: TracePacket = { proto: 'icmp', src: '172.18.0.3', dst: '172.18.0.2', inner: onNodeB };
    expect(flow.concerns(icmp)).toBe(true);
    expect(flow.clientPort(icmp)).toBe(40000);
    expect(flow.translationOf(icmp)?.node).toBe('node-a');
    // the client's own packets, as before, and nothing else from the node's address
    expect(flow.outbound(tcp('10.244.1.3', 40000, '172.18.0.3', 30080))).toEqual({ clientPort: 40000 });
    expect(flow.concerns(tcp('172.18.0.2', 2935, '172.18.0.3', 30080))).toBe(false);
  });

  it('learns nothing from a DNAT alone (the client address still marks the packet) or from another flow', () => {
    const dnatOnly = entry(
      'node-a',
      tcp('10.244.1.3', 40001, '10.96.0.20', 80),
      tcp('10.244.2.5', 8080, '10.244.1.3', 40001),
    );
    expect(ProbeFlow.of('10.244.1.3', [dnatOnly]).translations).toEqual([]);
    const other = entry(
      'node-a',
      tcp('10.244.1.9', 40000, '172.18.0.3', 30080),
      tcp('172.18.0.3', 30080, '172.18.0.2', 7),
    );
    expect(ProbeFlow.of('10.244.1.3', [other]).translations).toEqual([]);
    // the same entry reported again (UPDATE, DESTROY) adds nothing
    const flow = new ProbeFlow('10.244.1.3');
    expect(flow.learn(masqueraded)).toBe(true);
    expect(flow.learn({ ...masqueraded, event: 'DESTROY' })).toBe(false);
  });
});
