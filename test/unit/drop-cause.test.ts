// A drop is attributed from the node's state, never from a code location: the rules that read
// `ip -j neigh` and `bridge -j link`/`bridge -j fdb` (output shapes as iproute2 6.1 prints them on
// Linux 6.18), and the verdict words they give.
import { describe, expect, it } from 'vitest';
import { explainable, hairpinCause, neighbourCause } from '../../src/providers/netns/trace/drop-cause.ts';
import { parseDropLine } from '../../src/providers/netns/trace/parse-trace-lines.ts';
import { describeDrop } from '../../src/observe/trace/drop-verdict.ts';
import type { TraceEvent } from '../../src/model/trace-events.ts';

type Drop = Extract<TraceEvent, { kind: 'drop' }>;

const line = (rest: string) => parseDropLine(`drop ns=1 ${rest}`, 42, () => 'node/node-a')!;
const hairpinDrop = line(
  'reason=NOT_SPECIFIED loc=br_handle_frame_finish+0x380 if=veth68fec872 proto=6 10.244.1.2:55846 > 10.244.1.2:8080 flags=0x02 dmac=92:c8:22:cd:fd:4b',
);
const neighDrop = line(
  'reason=NEIGH_FAILED loc=neigh_invalidate+0x7e if=cilium_host proto=6 10.244.1.2:34336 > 10.244.1.99:8080 flags=0x02 dmac=00:00:00:00:00:01',
);

const port = (hairpin: boolean, master = 'cni0') => [
  {
    ifindex: 4,
    link: 'eth0',
    ifname: 'veth68fec872',
    flags: ['BROADCAST', 'MULTICAST', 'UP', 'LOWER_UP'],
    mtu: 1500,
    master,
    state: 'forwarding',
    hairpin,
    learning: true,
  },
];
const fdb = (behind: string) => [
  { mac: '33:33:00:00:00:01', ifname: 'cni0', flags: ['self'], state: 'permanent' },
  { mac: '92:c8:22:cd:fd:4b', ifname: behind, flags: [], master: 'cni0' },
  { mac: 'ce:11:0a:00:00:07', ifname: 'veth68fec872', flags: [], master: 'cni0', state: 'permanent' },
];

describe('which drops the node state may explain', () => {
  it('a failed neighbour, or a reasonless drop of a frame (its MAC known) in a node', () => {
    expect(explainable(neighDrop)).toBe(true);
    expect(explainable(hairpinDrop)).toBe(true);
    expect(explainable({ ...hairpinDrop, dmac: undefined })).toBe(false);
    expect(explainable({ ...hairpinDrop, where: 'pod/web' })).toBe(false);
    expect(explainable({ ...hairpinDrop, reason: 'NO_SOCKET' })).toBe(false);
    expect(explainable({ ...neighDrop, iface: '-' })).toBe(false);
  });
});

describe('hairpin: the bridge will not send a frame back out the port it came in on', () => {
  it('attributed when the MAC is behind the ingress port and that port has hairpin off', () => {
    expect(hairpinCause(port(false), fdb('veth68fec872'), hairpinDrop)).toEqual({
      kind: 'hairpin-off',
      bridge: 'cni0',
      port: 'veth68fec872',
      mac: '92:c8:22:cd:fd:4b',
    });
  });
  it('not with hairpin on, the MAC behind another port, no FDB entry, or a device that is no bridge port', () => {
    expect(hairpinCause(port(true), fdb('veth68fec872'), hairpinDrop)).toBeUndefined();
    expect(hairpinCause(port(false), fdb('vethother'), hairpinDrop)).toBeUndefined();
    expect(hairpinCause(port(false), [], hairpinDrop)).toBeUndefined();
    expect(hairpinCause([], fdb('veth68fec872'), hairpinDrop)).toBeUndefined();
    expect(hairpinCause(undefined, undefined, hairpinDrop)).toBeUndefined();
    // the entry of another bridge, or the bridge's own (self) entry, says nothing about this port
    expect(hairpinCause(port(false, 'br1'), fdb('veth68fec872'), hairpinDrop)).toBeUndefined();
    expect(
      hairpinCause(port(false), [{ mac: '92:c8:22:cd:fd:4b', ifname: 'veth68fec872', flags: ['self'] }], hairpinDrop),
    ).toBeUndefined();
  });
});

describe('NEIGH_FAILED: the neighbour that never answered ARP', () => {
  it("named when the packet's destination is FAILED (or still INCOMPLETE) on the device", () => {
    expect(neighbourCause([{ dst: '10.244.1.99', state: ['FAILED'] }], neighDrop)).toEqual({
      kind: 'neighbour',
      neighbour: '10.244.1.99',
      state: 'FAILED',
    });
    expect(neighbourCause([{ dst: '10.244.1.99', state: ['INCOMPLETE'] }], neighDrop)).toMatchObject({
      neighbour: '10.244.1.99',
    });
  });
  it('not when the destination resolved, or another address failed', () => {
    expect(neighbourCause([{ dst: '10.244.1.99', state: ['REACHABLE'] }], neighDrop)).toBeUndefined();
    expect(neighbourCause([{ dst: '10.244.1.7', state: ['FAILED'] }], neighDrop)).toBeUndefined();
    expect(neighbourCause(undefined, neighDrop)).toBeUndefined();
  });
});

describe('the verdict words', () => {
  const withCause = (d: Drop, cause: Drop['cause']) => ({ ...d, cause });
  it('a hairpin drop names the bridge, the port, the MAC and the flag', () => {
    const words = describeDrop(withCause(hairpinDrop, hairpinCause(port(false), fdb('veth68fec872'), hairpinDrop)));
    expect(words).toBe(
      "tcp 10.244.1.2:55846 > 10.244.1.2:8080 [SYN] dropped in node/node-a by the bridge cni0: its destination 92:c8:22:cd:fd:4b is behind veth68fec872, the port it came in on, and that port's hairpin mode is off (NOT_SPECIFIED at br_handle_frame_finish+0x380) at 42 ms",
    );
  });
  it('without a cause, the reason and location as before', () => {
    expect(describeDrop({ ...hairpinDrop, reason: 'IP_INNOROUTES' })).toBe(
      'tcp 10.244.1.2:55846 > 10.244.1.2:8080 [SYN] dropped in node/node-a (IP_INNOROUTES at br_handle_frame_finish+0x380, veth68fec872) at 42 ms',
    );
  });
});
