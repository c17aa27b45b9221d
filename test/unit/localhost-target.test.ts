// A probe to `localhost`: the client's own 127.0.0.1. Its packets leave from 127.0.0.1, so that is the client's
// address; they are watched on every interface (lo as well as the one a DNAT sends them out of), and the wire
// decides as for any probe: a connection a node's DNAT and portmap's masquerade took out of cni0, or a RST on lo.
import { describe, expect, it } from 'vitest';
import { Probe } from '../../src/model/scenario-schema.ts';
import { watchInterface } from '../../src/observe/probes/ahead-watches.ts';
import { classifyCurl, ownFlow } from '../../src/observe/probes/classify.ts';
import { parseTcpdumpLine, type Packet } from '../../src/observe/probes/packet-watch.ts';
import { probeAddresses } from '../../src/observe/probes/probe-addresses.ts';

const addresses: Record<string, string> = { 'node/node-a': '172.18.0.2', 'pod/client': '10.244.1.5' };
const cluster = { address: (ref: string) => addresses[ref] ?? `(no address for ${ref})` };
const packets = (lines: string[]) => lines.map((l) => parseTcpdumpLine(l)!) as Packet[];
const curl = (exitCode: number, stderr = '', httpCode = 0, body = '') => ({ exitCode, stderr, httpCode, body });

describe('a probe to localhost', () => {
  it('is written `to: localhost` from a node, a pod or a host; anything after it is no reference', () => {
    expect(Probe.safeParse({ id: 'p', from: 'node/node-a', http: { to: 'localhost', port: 1 } }).success).toBe(true);
    expect(Probe.safeParse({ id: 'p', from: 'client', udp: { to: 'localhost', port: 1 } }).success).toBe(true);
    const bad = Probe.safeParse({ id: 'p', from: 'client', http: { to: 'localhost/x', port: 1 } });
    expect(bad.success).toBe(false);
    expect(JSON.stringify(bad.error?.issues)).toContain("or localhost (the client's own 127.0.0.1)");
  });

  it("goes from the client's 127.0.0.1 to 127.0.0.1, whatever the client's own address", () => {
    const to = (from: string, target: string) =>
      probeAddresses(Probe.parse({ id: 'p', from, http: { to: target, port: 54321 } }), cluster);
    expect(to('node/node-a', 'localhost')).toEqual({ client: '127.0.0.1', endpoint: { ip: '127.0.0.1', port: 54321 } });
    expect(to('client', 'localhost')).toEqual({ client: '127.0.0.1', endpoint: { ip: '127.0.0.1', port: 54321 } });
    expect(to('client', 'node/node-a')).toEqual({ client: '10.244.1.5', endpoint: { ip: '172.18.0.2', port: 54321 } });
  });

  it("is watched on every interface: a pod's lo is not its eth0", () => {
    const spec = (from: string, to: string) => Probe.parse({ id: 'p', from, http: { to, port: 1 } });
    expect(watchInterface(spec('client', 'localhost'))).toBe('any');
    expect(watchInterface(spec('client', 'node/node-a'))).toBe('eth0');
    expect(watchInterface(spec('node/node-a', 'node/node-a'))).toBe('any');
  });

  it('reads a hostPort on 127.0.0.1 from the wire: DNATed and masqueraded out of cni0, the SYN-ACK from the pod', () => {
    // tcpdump -i any on the node: the SYN is never on lo (the DNAT is in nat OUTPUT, before it is sent)
    const seen = packets([
      '12:00:00.000001 cni0  Out IP 10.244.1.1.20000 > 10.244.1.2.80: Flags [S], seq 1, win 65495, length 0',
      '12:00:00.000002 cni0  In  IP 10.244.1.2.80 > 10.244.1.1.20000: Flags [S.], seq 9, ack 2, win 65160, length 0',
      '12:00:00.000003 cni0  Out IP 10.244.1.1.20000 > 10.244.1.2.80: Flags [.], ack 1, win 64, length 0',
      '12:00:00.000004 cni0  Out IP 10.244.1.1.20001 > 10.244.1.3.80: Flags [S], seq 1, win 65495, length 0',
    ]);
    const localhost = { ip: '127.0.0.1', port: 54321 };
    // the client as the runner reads it: the source of the SYN from the probe's own port
    const flow = ownFlow(seen, '10.244.1.1', localhost, 20000);
    expect(flow).toHaveLength(3);
    expect(
      classifyCurl({ ...curl(0, '', 200, 'pod1\n'), sourcePort: 20000 }, flow, '10.244.1.1', localhost),
    ).toMatchObject({ outcome: 'ok', servedBy: 'pod1', source: '10.244.1.2:80' });
  });

  it('reads a port nothing maps or listens on from lo: the RST from 127.0.0.1', () => {
    const seen = packets([
      '12:00:00.000001 lo    In  IP 127.0.0.1.20000 > 127.0.0.1.54321: Flags [S], seq 1, win 65495, length 0',
      '12:00:00.000002 lo    In  IP 127.0.0.1.54321 > 127.0.0.1.20000: Flags [R.], seq 0, ack 2, win 0, length 0',
    ]);
    const c = classifyCurl(
      { ...curl(7, 'curl: (7) Failed to connect to 127.0.0.1 port 54321: Connection refused'), sourcePort: 20000 },
      seen,
      '127.0.0.1',
      { ip: '127.0.0.1', port: 54321 },
    );
    expect(c).toMatchObject({ outcome: 'refused', source: '127.0.0.1:54321' });
    expect(c.reason).toMatch(/^RST from 127\.0\.0\.1:54321 in answer to the SYN to 127\.0\.0\.1:54321/);
  });
});
