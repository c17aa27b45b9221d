// A drop is attributed from the node's state, never from a code location: the rules that read
// `ip -j neigh`, `bridge -j link`/`bridge -j fdb`, `sysctl -n` and `ip -j route get` (output shapes as
// iproute2 6.1 and procps 4 print them on Linux 6.18), and the verdict words they give.
import { describe, expect, it } from 'vitest';
import {
  explainable,
  forwardingCause,
  hairpinCause,
  neighbourCause,
  noListenerCause,
  rpFilterCause,
} from '../../src/providers/netns/trace/drop-cause.ts';
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

const rpfDrop = line(
  'reason=IP_RPFILTER loc=ip_rcv_finish_core+0x25b if=flannel.1 proto=6 10.244.1.2:54958 > 10.244.2.2:8080 flags=0x02 dmac=0e:6e:72:00:00:02',
);

const forwardDrop = line(
  'reason=IP_INADDRERRORS loc=ip_error+0x94 if=cni0 proto=6 10.244.1.2:43476 > 10.244.2.2:8080 flags=0x02 dmac=ae:1f:00:00:00:01',
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
    expect(explainable({ ...hairpinDrop, reason: 'NO_SOCKET', packet: { ...hairpinDrop.packet, flags: 'ACK' } })).toBe(
      false,
    );
    expect(explainable({ ...neighDrop, iface: '-' })).toBe(false);
  });
  it('a failed reverse path check anywhere: a node, a pod or a host has its own rp_filter and routes', () => {
    expect(explainable(rpfDrop)).toBe(true);
    expect(explainable({ ...rpfDrop, where: 'pod/web' })).toBe(true);
    expect(explainable({ ...rpfDrop, iface: '-' })).toBe(false);
  });
});

describe('IP_RPFILTER: the rp_filter values and the route back to the source', () => {
  const answered = (stdout: string) => ({ exitCode: 0, stdout, stderr: '' });
  const lookup = ['ip', '-4', 'route', 'get', '10.244.1.2'];
  it('reads both values and the route, as the kernel looked it up', () => {
    const route =
      '[{"dst":"10.244.1.2","gateway":"172.18.0.2","dev":"eth0","prefsrc":"172.18.0.3","flags":[],"uid":0,"cache":[]}]';
    expect(rpFilterCause('1\n0\n', lookup, answered(route), rpfDrop)).toEqual({
      kind: 'rp-filter',
      iface: 'flannel.1',
      all: 1,
      ifaceValue: 0,
      lookup: 'ip -4 route get 10.244.1.2',
      route: { text: '10.244.1.2 via 172.18.0.2 dev eth0 src 172.18.0.3', dev: 'eth0' },
    });
    // a local destination: the lookup with it as the source, as fib_validate_source makes it
    const from =
      '[{"dst":"10.0.0.5","from":"10.0.0.1","gateway":"10.1.0.2","dev":"flannel.1","flags":[],"uid":0,"cache":[]}]';
    expect(rpFilterCause('0\n2\n', [...lookup, 'from', '10.0.0.1'], answered(from), rpfDrop)).toMatchObject({
      all: 0,
      ifaceValue: 2,
      lookup: 'ip -4 route get 10.244.1.2 from 10.0.0.1',
      route: { text: '10.0.0.5 from 10.0.0.1 via 10.1.0.2 dev flannel.1', dev: 'flannel.1' },
    });
  });
  it('no route back: the error the lookup gave', () => {
    const none = { exitCode: 2, stdout: '', stderr: 'RTNETLINK answers: Network is unreachable\n' };
    expect(rpFilterCause('2\n2\n', lookup, none, rpfDrop)).toMatchObject({
      route: { text: 'Network is unreachable', error: 'Network is unreachable' },
    });
  });
  it('nothing when the values could not be read (an interface gone since the drop) or the answer is not a route', () => {
    expect(rpFilterCause('1\n', lookup, answered('[]'), rpfDrop)).toBeUndefined();
    expect(rpFilterCause('1\n0\n', lookup, answered('not json'), rpfDrop)).toBeUndefined();
  });
});

describe('IP_INADDRERRORS in ip_error: the interface the packet came in on does not forward', () => {
  it('explainable there only; the settings name ip_forward and the interface', () => {
    expect(explainable(forwardDrop)).toBe(true);
    expect(explainable({ ...forwardDrop, location: 'ip_rcv_finish_core+0x1' })).toBe(false);
    expect(forwardingCause('0\n0\n', forwardDrop)).toEqual({
      kind: 'forwarding-off',
      iface: 'cni0',
      ipForward: 0,
      ifaceForwarding: 0,
    });
    expect(forwardingCause('1\n0\n', forwardDrop)).toMatchObject({ ipForward: 1, ifaceForwarding: 0 });
  });

  it('nothing when the interface forwards (another cause) or the values could not be read', () => {
    expect(forwardingCause('1\n1\n', forwardDrop)).toBeUndefined();
    expect(forwardingCause('', forwardDrop)).toBeUndefined();
  });
});

describe('NO_SOCKET of a SYN: nothing listens on its port', () => {
  const synDrop = line(
    'reason=NO_SOCKET loc=tcp_v4_rcv+0x99 if=eth0 proto=6 10.244.1.2:50022 > 10.244.1.3:80 flags=0x02',
  );
  it('explainable in a pod too; what listens instead, as ss -Htln prints it', () => {
    expect(explainable({ ...synDrop, where: 'pod/web' })).toBe(true);
    const ss =
      'LISTEN 0      4096         0.0.0.0:8080      0.0.0.0:*          \nLISTEN 0      128        127.0.0.1:9090      0.0.0.0:*\n';
    expect(noListenerCause(ss, synDrop)).toEqual({
      kind: 'no-listener',
      port: 80,
      listening: ['0.0.0.0:8080', '127.0.0.1:9090'],
    });
    expect(noListenerCause('', synDrop)).toEqual({ kind: 'no-listener', port: 80, listening: [] });
  });

  it('not when something listens on the port after all (a backlog overflow, say), nor for a UDP socket', () => {
    expect(noListenerCause('LISTEN 0 4096 *:80 *:*\n', synDrop)).toBeUndefined();
    const udp = line('reason=NO_SOCKET loc=__udp4_lib_rcv+0x1 if=eth0 proto=17 10.96.0.10:53 > 10.244.1.2:40000');
    expect(explainable({ ...udp, where: 'pod/client' })).toBe(false);
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
