// The trace tools' output as recorded on Linux 6.18 (iptables 1.8.9 nf_tables, conntrack-tools 1.4.7, our drop tracer).
import { describe, expect, it } from 'vitest';
import {
  parseConntrackLine,
  parseDropLine,
  XtablesTraceParser,
} from '../../src/providers/netns/trace/parse-trace-lines.ts';
import { invalidTraceRule, labTraceRules, readTraceRuleset } from '../../src/providers/netns/trace/trace-rules.ts';

describe('xtables-monitor --trace', () => {
  it('pairs each TRACE line with its PACKET line: table, chain, verdict, rule text', () => {
    const parser = new XtablesTraceParser('node-a');
    const lines = [
      'PACKET: 2 b2b96ff9 IN=lxc0af40102 OUT=eth0 MACSRC=6a:89:96:2a:6f:c9 MACDST=fa:fc:2c:c0:aa:99 MACPROTO=0800 SRC=10.244.1.2 DST=172.18.0.100 LEN=52 TOS=0x0 TTL=63 ID=1663 DF SPORT=46342 DPORT=80 ACK ',
      ' TRACE: 2 b2b96ff9 filter:FORWARD:rule:0x9:JUMP:KUBE-FORWARD  -4 -t filter -A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD',
      ' TRACE: 2 b2b96ff9 filter:KUBE-FORWARD:rule:0x1e:DROP  -4 -t filter -A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP',
      ' TRACE: 2 b2b96ff9 raw:PREROUTING:policy:ACCEPT ',
    ];
    const events = lines.map((l) => parser.feed(l, 1)).filter(Boolean);
    expect(events).toHaveLength(3);
    expect(events[0]).toMatchObject({ table: 'filter', chain: 'FORWARD', verdict: 'JUMP', target: 'KUBE-FORWARD' });
    expect(events[1]).toMatchObject({
      node: 'node-a',
      table: 'filter',
      chain: 'KUBE-FORWARD',
      verdict: 'DROP',
      rule: '-4 -t filter -A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP',
      iif: 'lxc0af40102',
      oif: 'eth0',
      packet: { proto: 'tcp', src: '10.244.1.2', dst: '172.18.0.100', sport: 46342, dport: 80, flags: 'ACK' },
    });
    expect(events[2]).toMatchObject({ verdict: 'policy ACCEPT', rule: undefined });
  });
});

describe('drop tracer lines', () => {
  it("names the namespace, reason, function and packet; ignores namespaces that are not the lab's", () => {
    const line =
      'drop ns=4026532246 reason=NO_SOCKET loc=__udp4_lib_rcv+0x4bc if=eth0 proto=17 10.244.1.3:53 > 10.244.1.2:54661 flags=0x00';
    expect(parseDropLine(line, 3, (n) => (n === 4026532246 ? 'pod/client' : undefined))).toEqual({
      kind: 'drop',
      at: 3,
      where: 'pod/client',
      reason: 'NO_SOCKET',
      location: '__udp4_lib_rcv+0x4bc',
      iface: 'eth0',
      packet: { proto: 'udp', src: '10.244.1.3', dst: '10.244.1.2', sport: 53, dport: 54661, flags: undefined },
    });
    expect(parseDropLine(line, 3, () => undefined)).toBeUndefined();
    // a frame with a MAC header ends with its Ethernet destination (a bridge drop is explained by it)
    const bridged = parseDropLine(`${line} dmac=92:c8:22:cd:fd:4b`, 3, () => 'node/node-a');
    expect(bridged).toMatchObject({ reason: 'NO_SOCKET', dmac: '92:c8:22:cd:fd:4b' });
    expect(parseDropLine(line, 3, () => 'pod/client')).not.toHaveProperty('dmac');
    const tcp = parseDropLine(
      'drop ns=1 reason=NETFILTER_DROP loc=nft_do_chain+0x3e8 if=lxc0 proto=6 10.244.1.2:46342 > 172.18.0.100:80 flags=0x10',
      0,
      () => 'node/node-a',
    );
    expect(tcp?.packet.flags).toBe('ACK');
  });

  it('an ICMP error the node dropped in OUTPUT (no device yet): its type, the MTU, and the header it quotes', () => {
    const line =
      'drop ns=7 reason=NETFILTER_DROP loc=nft_do_chain+0x3e8 if=- proto=1 10.244.2.1:0 > 10.244.2.2:0 flags=0x00 icmp=3/4 mtu=1400 inner=6 10.244.2.2:8080 > 10.244.1.2:36238';
    expect(parseDropLine(line, 0, () => 'node/node-b')?.packet).toEqual({
      proto: 'icmp',
      src: '10.244.2.1',
      dst: '10.244.2.2',
      sport: undefined,
      dport: undefined,
      flags: undefined,
      icmp: { type: 3, code: 4, mtu: 1400 },
      inner: { proto: 'tcp', src: '10.244.2.2', dst: '10.244.1.2', sport: 8080, dport: 36238 },
    });
  });

  it('identical drops the tracer counted in one poll: one event with their number; a single drop has none', () => {
    const line =
      'drop ns=9 reason=QDISC_DROP loc=__dev_queue_xmit+0x8a4 if=eth0 proto=6 10.244.1.3:8080 > 10.244.1.2:40000 flags=0x10';
    expect(parseDropLine(`${line} repeat=37`, 0, () => 'node/node-a')).toEqual({
      ...parseDropLine(line, 0, () => 'node/node-a'),
      repeat: 37,
    });
    expect(parseDropLine(line, 0, () => 'node/node-a')).not.toHaveProperty('repeat');
  });
});

describe('conntrack -E', () => {
  it('reads the event, state and both tuples', () => {
    const e = parseConntrackLine(
      '    [NEW] tcp      6 120 SYN_SENT src=10.244.1.2 dst=10.96.0.20 sport=40000 dport=80 [UNREPLIED] src=10.244.1.3 dst=10.244.1.2 sport=8080 dport=40000',
      0,
      'node-a',
    );
    expect(e).toMatchObject({
      event: 'NEW',
      state: 'SYN_SENT',
      unreplied: true,
      packet: { src: '10.244.1.2', dst: '10.96.0.20', dport: 80 },
      reply: { src: '10.244.1.3', sport: 8080 },
    });
    const udp = parseConntrackLine(
      ' [NEW] udp      17 30 src=10.244.1.2 dst=10.96.0.10 sport=54661 dport=53 [UNREPLIED] src=10.244.1.3 dst=10.244.1.2 sport=53 dport=54661',
      0,
      'node-a',
    );
    expect(udp).toMatchObject({ state: undefined, reply: { src: '10.244.1.3', sport: 53 } });
  });
});

describe('trace rules', () => {
  it('mark what decides a connection (SYN, RST, UDP, ICMP, INVALID), never the data stream, all tagged', () => {
    const rules = labTraceRules();
    expect(rules).toContain('*raw\n-A PREROUTING -p tcp --syn -m comment --comment netrepro-trace -j TRACE\n');
    expect(rules).not.toMatch(/-A OUTPUT -o lo |--dport 9\b/); // no readiness or flush marker: nothing is sent to be traced
    // a node's own probe: its SYN and datagrams leave through OUTPUT (VXLAN's outer datagrams left out)
    expect(rules).toContain('-A OUTPUT ! -o lo -p tcp --syn -m comment --comment netrepro-trace -j TRACE');
    expect(rules).toContain(
      '-A OUTPUT ! -o lo -p udp -m multiport ! --dports 4789,8472 -m comment --comment netrepro-trace -j TRACE',
    );
    expect(rules).not.toContain('conntrack'); // raw needs no conntrack: tracing must not switch it on
    expect(invalidTraceRule()).toBe(
      '*mangle\n-A PREROUTING -m conntrack --ctstate INVALID -m comment --comment netrepro-trace -j TRACE\nCOMMIT\n',
    );
    expect(
      rules
        .split('\n')
        .filter((l) => l.startsWith('-A'))
        .every((l) => l.includes('--comment netrepro-trace -j TRACE')),
    ).toBe(true);
  });
});

describe("what a node's ruleset says for the trace", () => {
  const save = (rules: string[], backend = 'nf_tables') =>
    [
      `# Generated by iptables-save v1.8.9 (${backend}) on Tue Nov 24 13:16:59 2026`,
      '*raw',
      ':PREROUTING ACCEPT [0:0]',
      '-A PREROUTING -p tcp -m tcp --tcp-flags FIN,SYN,RST,ACK SYN -m comment --comment netrepro-trace -j TRACE',
      'COMMIT',
      '*nat',
      ...rules,
      'COMMIT',
      '',
    ].join('\n');

  it('traced: the TRACE rules are in, and iptables is nf_tables (iptables-legacy logs them to the kernel instead)', () => {
    expect(readTraceRuleset(save([])).traced).toBe(true);
    expect(readTraceRuleset(save([], 'legacy')).traced).toBe(false);
    expect(readTraceRuleset(save([]).replace(/^-A PREROUTING .*TRACE$/m, '')).traced).toBe(false);
  });

  it('conntrack runs where a rule needs it (kube-proxy, flannel), not for a nat chain, a jump, a mark or a notrack', () => {
    for (const rule of [
      '-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP',
      '-A FORWARD -m state --state NEW -j ACCEPT',
      '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully',
      '-A KUBE-SEP-X -p tcp -m tcp -j DNAT --to-destination 10.244.1.3:8080',
      '-A POSTROUTING -o eth9 -j SNAT --to-source 1.1.1.1',
      '-A PREROUTING -p tcp -m tcp --dport 81 -j REDIRECT --to-ports 80',
      '-A FORWARD -j CONNMARK --set-xmark 0x1/0xffffffff',
      '-A FORWARD -m connmark --mark 0x1 -j ACCEPT',
      '-A PREROUTING -p tcp -j CT --zone 1',
    ])
      expect(readTraceRuleset(save([rule])).conntrack, rule).toBe(true);
    for (const rule of [
      '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
      '-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000',
      '-A PREROUTING -p tcp -j CT --notrack',
      '-A POSTROUTING -m comment --comment "a rule that says -j SNAT" -j ACCEPT',
    ])
      expect(readTraceRuleset(save([rule])).conntrack, rule).toBe(false);
  });
});
