// The diagnosis is part of the contract: for every seed scenario, the culprit its faulted probe's trace
// names. The fixtures are probe results recorded from real runs of the netns lab (Linux 6.18):
// the client's packets, the trace events (xtables-monitor, kfree_skb, conntrack -E) and the facts.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { CheckResult, PhaseName, ProbeResult, StepResult } from '../../src/engine/run/results.ts';
import type { ProbeTraceResult } from '../../src/model/trace-events.ts';
import { policyFacts } from '../../src/providers/netns/trace/trace-facts.ts';
import { diagnose } from '../../src/observe/trace/diagnosis.ts';

interface Fixture {
  phase: PhaseName;
  steps?: StepResult[];
  checks: CheckResult[];
  probe: ProbeResult & { trace: ProbeTraceResult };
  /** The same probe in the baseline of the same lab (recorded for a faulted probe that was answered). */
  baseline?: { observed: string; detail: Record<string, unknown> };
}

const fixture = (name: string): Fixture =>
  JSON.parse(readFileSync(new URL(`./fixtures/probe-traces/${name}.json`, import.meta.url), 'utf8')) as Fixture;
const run = (name: string) => {
  const f = fixture(name);
  const d = diagnose({
    probe: f.probe,
    phase: f.phase,
    steps: f.steps,
    checks: f.checks,
    trace: f.probe.trace,
    baseline: f.baseline,
  });
  if (!d) throw new Error(`no diagnosis for ${name}`);
  return d;
};

describe('diagnosis of the seed incidents (recorded traces)', () => {
  it('cilium-kube-proxy-forward-race: the INVALID DROP rule in KUBE-FORWARD, conntrack in SYN_SENT, the SYN-ACK handled by the tc program', () => {
    const d = run('cilium-kube-proxy-forward-race--external');
    expect(d.culprit).toEqual({
      kind: 'rule',
      node: 'node-a',
      where: 'filter/KUBE-FORWARD',
      text: '-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP',
    });
    expect(d.packet).toMatchObject({ src: '10.244.1.2', dst: '172.18.0.100', dport: 80, flags: 'ACK' });
    expect(d.reason).toContain('SYN_SENT [UNREPLIED]');
    expect(d.reason).toMatch(/SYN-ACK was handled by the tc program nr_masq_ingress \(id \d+\) on node-a eth0 ingress/);
    expect(d.path.find((s) => s.culprit)).toMatchObject({
      where: 'node/node-a',
      kind: 'drop',
      action: 'filter/KUBE-FORWARD DROP',
    });
    expect(d.path.some((s) => s.kind === 'bpf' && s.hook === 'tc ingress eth0')).toBe(true);
  });

  it("the packet path draws the probe's own connection on the nodes it crossed: no deduced hop on another node, no earlier connection's drop", () => {
    const f = fixture('cilium-kube-proxy-forward-race--external');
    const tcA = f.probe.trace.facts.find((x) => x.kind === 'tc-program' && x.node === 'node-a');
    if (tcA?.kind !== 'tc-program') throw new Error('no tc program in the fixture');
    const drop = f.probe.trace.events.find((e) => e.kind === 'drop')!;
    if (drop.kind !== 'drop') throw new Error('no drop in the fixture');
    const trace: ProbeTraceResult = {
      ...f.probe.trace,
      // node-b runs the same programs; an earlier connection from port 1 loses its late FIN on node-a
      facts: [...f.probe.trace.facts, { ...tcA, node: 'node-b', id: 99999 }],
      events: [{ ...drop, packet: { ...drop.packet, sport: 1, flags: 'FIN ACK' } }, ...f.probe.trace.events],
    };
    const d = diagnose({
      probe: f.probe,
      phase: f.phase,
      steps: f.steps,
      checks: f.checks,
      trace,
      baseline: f.baseline,
    });
    expect(d?.path.filter((s) => s.where === 'node/node-b')).toEqual([]);
    expect(d?.path.filter((s) => /:1 >/.test(s.packet))).toEqual([]);
    expect(d?.path.some((s) => s.kind === 'bpf' && s.where === 'node/node-a')).toBe(true);
  });

  it('conntrack-invalid-reset: "SEQ is over upper bound", the forged segment, the un-NATed packet reaching the client', () => {
    const d = run('conntrack-invalid-reset--download');
    expect(d.culprit).toMatchObject({ kind: 'kernel', node: 'node-a', where: 'conntrack (INVALID: no reverse NAT)' });
    expect(d.culprit.text).toMatch(/^SEQ is over upper bound/);
    expect(d.packet).toMatchObject({ src: '10.244.1.3', sport: 8080, dst: '10.244.1.2' });
    expect(d.reason).toMatch(/It is the forged segment: seq \d+, 1073741824 bytes ahead of the live seq \d+/);
    expect(d.reason).toContain('the un-NATed packet reached the client, which answered RST to 10.244.1.3:8080');
  });

  it('conntrack-invalid-reset under kube-proxy 1.20: the INVALID drop of a segment outside the window of a connection conntrack saw both ways', () => {
    const d = run('conntrack-invalid-reset-kube-proxy-1-20--download');
    expect(d.culprit).toEqual({
      kind: 'rule',
      node: 'node-a',
      where: 'filter/KUBE-FORWARD',
      text: '-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP',
    });
    expect(d.reason).toMatch(/had seen the connection both ways \(ESTABLISHED\), so the packet was INVALID by itself/);
    expect(d.reason).toMatch(/as the kernel logged: "nf_ct_proto_6: SEQ is over upper bound \d+/);
    // the story of a reply conntrack never saw belongs to the Cilium race, not here
    expect(d.reason).not.toMatch(/never saw|TIME_WAIT/);
  });

  it('stale-sock-lb-program: the connect4 program (id, attach order) that rewrote the ClusterIP to the dead backend', () => {
    const d = run('stale-sock-lb-program--clusterip');
    expect(d.culprit.kind).toBe('bpf-program');
    expect(d.culprit.where).toMatch(/^cgroup_inet4_connect \S+ \(1st of 2\)$/);
    expect(d.culprit.text).toMatch(/^cil_sock4_connect id \d+: 10\.96\.0\.30:80 -> 10\.244\.1\.99:8080$/);
    expect(d.reason).toContain('pinned /sys/fs/bpf/netrepro/sock-stale');
    expect(d.packet).toMatchObject({ dst: '10.244.1.99', dport: 8080, flags: 'SYN' });
    // what became of the SYN: the node's neighbour table (read at the drop) and the ICMP the client got
    expect(d.reason).toMatch(
      /The SYN went to 10\.244\.1\.99:8080, which nobody holds: node-a queued it while its ARP for 10\.244\.1\.99 on cilium_host got no answer \(FAILED in its neighbour table\), then dropped it \(NEIGH_FAILED in neigh_invalidate\+0x[0-9a-f]+\) and answered the client with ICMP host-unreachable from 172\.18\.0\.2\./,
    );
  });

  it('hairpin-off-pod-to-own-service: the bridge port the SYN came in on, its hairpin off and the MAC behind it', () => {
    const d = run('hairpin-off-pod-to-own-service--self-via-service');
    expect(d.culprit).toMatchObject({
      kind: 'kernel',
      node: 'node/node-a',
      where: expect.stringMatching(/^veth\w+ on bridge cni0 \(hairpin off\)$/),
    });
    expect(d.packet).toMatchObject({ src: '10.244.1.2', dst: '10.244.1.2', dport: 8080, flags: 'SYN' });
    expect(d.reason).toMatch(
      /^The SYN to 10\.96\.0\.20:80 was DNATed on node-a by nat\/KUBE-SEP-\w+ to 10\.244\.1\.2:8080, the client itself\./,
    );
    expect(d.reason).toMatch(
      /its destination ([0-9a-f]{2}:){5}[0-9a-f]{2} is behind that port in cni0's FDB, and the port's hairpin mode is off/,
    );
    expect(d.path.find((s) => s.culprit)).toMatchObject({
      where: 'node/node-a',
      kind: 'drop',
      action: expect.stringMatching(/^dropped by cni0: not sent back out veth\w+ \(hairpin off\)$/),
    });
  });

  it('a bridge drop without the state that explains it names no culprit (NOT_SPECIFIED alone is no evidence)', () => {
    const f = fixture('hairpin-off-pod-to-own-service--self-via-service');
    const events = f.probe.trace.events.map((e) => (e.kind === 'drop' ? { ...e, cause: undefined } : e));
    expect(
      diagnose({ probe: f.probe, phase: 'faulted', checks: [], trace: { ...f.probe.trace, events } }),
    ).toBeUndefined();
  });

  it('a capture socket that dropped its own copy (PACKET_SOCK_ERROR) is never the culprit', () => {
    const f = fixture('hairpin-off-pod-to-own-service--self-via-service');
    // only the observer's drop is left: the hairpin drop's cause is gone, and tcpdump's clone was freed
    const events = f.probe.trace.events.map((e) =>
      e.kind === 'drop' ? { ...e, cause: undefined, reason: 'PACKET_SOCK_ERROR', location: 'packet_rcv+0x4f' } : e,
    );
    expect(
      diagnose({ probe: f.probe, phase: 'faulted', checks: [], trace: { ...f.probe.trace, events } }),
    ).toBeUndefined();
  });

  it('br-netfilter-clusterip-same-node: the SYN-ACK bridged without passing the nat table kept the pod IP', () => {
    const d = run('br-netfilter-clusterip-same-node--clusterip');
    expect(d.culprit).toMatchObject({
      kind: 'kernel',
      node: 'node-a',
      where: 'bridge (net.bridge.bridge-nf-call-iptables=0)',
    });
    expect(d.packet).toMatchObject({ src: '10.244.1.3', sport: 8080, dst: '10.244.1.2', flags: 'SYN ACK' });
    expect(d.reason).toContain('without passing the nat table, so it was never reverse-NATed and kept the pod IP');
    expect(d.reason).toContain('SYN_SENT [UNREPLIED]');
  });

  it("br-netfilter-dns-unexpected-source: the client's connected UDP socket dropped the reply (NO_SOCKET)", () => {
    const d = run('br-netfilter-dns-unexpected-source--nslookup-vip');
    expect(d.culprit).toMatchObject({
      kind: 'socket',
      node: 'pod/client',
      where: 'udp socket connected to 10.96.0.10:53',
    });
    expect(d.culprit.text).toMatch(/^NO_SOCKET at __udp4_lib_rcv/);
    expect(d.packet).toMatchObject({ proto: 'udp', src: '10.244.1.3', sport: 53 });
    // our own resolver reads on an unconnected socket: it takes the reply, so the bridge is the culprit there
    expect(run('br-netfilter-dns-unexpected-source--dns-vip').culprit).toMatchObject({
      kind: 'kernel',
      where: 'bridge (net.bridge.bridge-nf-call-iptables=0)',
    });
  });

  it("ignores an earlier probe's connection still retransmitting into the same rule", () => {
    const f = fixture('cilium-kube-proxy-forward-race--external');
    const own = run('cilium-kube-proxy-forward-race--external').packet.sport;
    const drop = f.probe.trace.events.find((e) => e.kind === 'rule' && e.verdict === 'DROP')!;
    const stray = { ...drop, at: 0, id: 'stray', packet: { ...drop.packet, sport: 1234, flags: 'ACK FIN PSH' } };
    const trace = { ...f.probe.trace, events: [stray, ...f.probe.trace.events] };
    expect(diagnose({ probe: f.probe, phase: 'faulted', checks: [], trace })?.packet.sport).toBe(own);
  });

  it("mtu-blackhole-vxlan-icmp-dropped: the OUTPUT rule that dropped the frag-needed about the server's segment to the client", () => {
    const d = run('mtu-blackhole-vxlan-icmp-dropped--download');
    expect(d.culprit).toEqual({
      kind: 'rule',
      node: 'node-b',
      where: 'filter/OUTPUT',
      text: '-A OUTPUT -p icmp -m icmp --icmp-type 3/4 -j DROP',
    });
    expect(d.packet).toMatchObject({
      proto: 'icmp',
      icmp: { type: 3, code: 4, mtu: 1400 },
      inner: { proto: 'tcp', src: '10.244.2.2', sport: 8080, dst: '10.244.1.2' },
    });
    expect(d.reason).toContain(
      'dropped the ICMP error icmp 10.244.2.1 > 10.244.2.2 [frag-needed mtu 1400] that node-b sent 10.244.2.2 about its packet tcp 10.244.2.2:8080 > 10.244.1.2:',
    );
    expect(d.reason).toMatch(
      /never learns the path MTU \(1400\).*\d+× PKT_TOO_BIG in ip_forward\+0x[0-9a-f]+ on cni0\): an MTU black hole/,
    );
    expect(d.path.find((s) => s.culprit)).toMatchObject({
      where: 'node/node-b',
      kind: 'drop',
      action: 'filter/OUTPUT DROP',
    });
  });

  it('counts a drop the tracer reported once for several identical ones (repeat) as that many', () => {
    const f = fixture('mtu-blackhole-vxlan-icmp-dropped--download');
    const tooBig = (e: ProbeTraceResult['events'][number]) => e.kind === 'drop' && e.reason === 'PKT_TOO_BIG';
    const drops = f.probe.trace.events.filter(tooBig);
    expect(drops.length).toBeGreaterThan(1);
    const folded = {
      ...f.probe.trace,
      events: f.probe.trace.events.flatMap((e) =>
        e === drops[0] ? [{ ...e, repeat: drops.length }] : tooBig(e) ? [] : [e],
      ),
    };
    const original = run('mtu-blackhole-vxlan-icmp-dropped--download');
    const d = diagnose({ probe: f.probe, phase: f.phase, steps: f.steps, checks: f.checks, trace: folded })!;
    expect(d.reason).toBe(original.reason);
    expect(d.reason).toContain(`${drops.length}× PKT_TOO_BIG`);
    const shown = (path: typeof d.path) =>
      path
        .filter((s) => s.action.startsWith('dropped: PKT_TOO_BIG'))
        .reduce((n, s) => n + Number(/ ×(\d+)$/.exec(s.action)?.[1] ?? 1), 0);
    expect(shown(d.path)).toBe(drops.length);
    expect(shown(original.path)).toBe(drops.length);
  });

  it('e2e-terminating-fallback-etp-local: the DROP on the other node, of the packet node-a masqueraded (followed by its conntrack entry)', () => {
    const d = run('e2e-terminating-fallback-etp-local--pod0-to-node1');
    expect(d.culprit).toEqual({
      kind: 'rule',
      node: 'node-b',
      where: 'filter/KUBE-EXTERNAL-SERVICES',
      text: '-A KUBE-EXTERNAL-SERVICES -p tcp -m comment --comment "default/svc-proxy-terminating:http has no local endpoints" -m addrtype --dst-type LOCAL -m tcp --dport 30080 -j DROP',
    });
    // the dropped packet carries node-a's address, not the client's
    expect(d.packet).toMatchObject({ src: '172.18.0.2', dst: '172.18.0.3', dport: 30080, flags: 'SYN' });
    expect(d.reason).toMatch(
      /dropped the client's packet tcp 10\.244\.1\.3:\d+ > 172\.18\.0\.3:30080 \[SYN\] \(node-a masqueraded \(nat\/FLANNEL-POSTRTG `-A FLANNEL-POSTRTG -s 10\.244\.0\.0\/16 ! -d 224\.0\.0\.0\/4 -m comment --comment "flanneld masq" -j MASQUERADE --random-fully`\) it into tcp 172\.18\.0\.2:\d+ > 172\.18\.0\.3:30080 \[SYN\]\)\./,
    );
    expect(d.evidence).toEqual([
      {
        where: 'node/node-a',
        command: 'conntrack -E',
        output: expect.stringMatching(
          /^\[NEW\] tcp .* src=10\.244\.1\.3 dst=172\.18\.0\.3 .* src=172\.18\.0\.3 dst=172\.18\.0\.2 /,
        ),
      },
    ]);
    expect(d.path.find((s) => s.culprit)).toMatchObject({ where: 'node/node-b', kind: 'drop' });
  });

  it('a REJECT on the other node after the masquerade is named as a reject, with the ICMP the client got; the purged socket queue is not a culprit', () => {
    const f = fixture('e2e-terminating-fallback-etp-local--pod0-to-node1-rejected');
    expect(f.probe.trace.events.some((e) => e.kind === 'drop' && e.reason === 'QUEUE_PURGE')).toBe(true);
    const d = run('e2e-terminating-fallback-etp-local--pod0-to-node1-rejected');
    expect(d.culprit).toMatchObject({ kind: 'rule', node: 'node-b', where: 'filter/KUBE-EXTERNAL-SERVICES' });
    expect(d.culprit.text).toMatch(/-j REJECT --reject-with icmp-port-unreachable$/);
    expect(d.reason).toMatch(
      /rejected the client's packet tcp 10\.244\.1\.3:\d+ > 172\.18\.0\.3:30080 \[SYN\] \(node-a masqueraded/,
    );
    expect(d.reason).toContain('it answered with ICMP port-unreachable instead of passing it on.');
    expect(d.reason).toContain('The client got it, reverse-NATed by node-a: ICMP port-unreachable from 172.18.0.3.');
    expect(d.path.find((s) => s.culprit)).toMatchObject({ where: 'node/node-b', kind: 'reject' });
    // without the other node's verdicts, the queue the client's socket purged is still no culprit
    const events = f.probe.trace.events.filter((e) => !(e.kind === 'rule' && e.node === 'node-b'));
    const rest = diagnose({ probe: f.probe, phase: f.phase, checks: [], trace: { ...f.probe.trace, events } });
    expect(rest?.culprit.text ?? '').not.toContain('QUEUE_PURGE');
  });

  it('rp-filter-strict-asymmetric-route: IP_RPFILTER with the rp_filter values and the route back that made the strict check fail', () => {
    const d = run('rp-filter-strict-asymmetric-route--other-node');
    expect(d.culprit).toEqual({
      kind: 'kernel',
      node: 'node/node-b',
      where: 'reverse path filter on flannel.1',
      text: expect.stringMatching(
        /^IP_RPFILTER: rp_filter 1 \(strict\), the route back to 10\.244\.1\.\d+: 10\.244\.1\.\d+ via 172\.18\.0\.2 dev eth0 src 172\.18\.0\.3$/,
      ),
    });
    expect(d.reason).toContain(
      'rp_filter on flannel.1 is 1 (strict): the kernel uses the higher of net.ipv4.conf.all.rp_filter = 1 and net.ipv4.conf.flannel/1.rp_filter = 0.',
    );
    expect(d.reason).toMatch(
      /`ip -4 route get 10\.244\.1\.\d+` in node-b gives `10\.244\.1\.\d+ via 172\.18\.0\.2 dev eth0 src 172\.18\.0\.3`: the reply would leave by eth0, not flannel\.1 \(asymmetric routes\)\./,
    );
    expect(d.evidence?.map((r) => r.command)).toEqual([
      'sysctl net.ipv4.conf.all.rp_filter net.ipv4.conf.flannel/1.rp_filter',
      expect.stringMatching(/^ip -4 route get 10\.244\.1\.\d+$/),
    ]);
    expect(d.path.find((s) => s.culprit)).toMatchObject({ where: 'node/node-b', action: 'dropped: IP_RPFILTER' });
  });

  it("rp_filter loose on node-b only: the SYN-ACK, dropped by node-a's strict check on eth0 (a drop of the reply, found for the diagnosis)", () => {
    const d = run('rp-filter-strict-asymmetric-route--other-node-loose-on-node-b-only');
    expect(d.culprit).toMatchObject({ kind: 'kernel', node: 'node/node-a', where: 'reverse path filter on eth0' });
    expect(d.packet).toMatchObject({ src: '10.244.2.2', sport: 8080, flags: 'SYN ACK' });
    expect(d.reason).toContain('the reply would leave by flannel.1, not eth0 (asymmetric routes)');
  });

  it('a fault that drops nothing: the masquerade that hid the client, with the rule that marked it for it', () => {
    const d = run('nat-changes-what-the-probe-sees--nodeport');
    expect(d.culprit).toEqual({
      kind: 'rule',
      node: 'node-a',
      where: 'nat/KUBE-POSTROUTING',
      text: '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully',
    });
    expect(d.reason).toMatch(
      /^Nothing dropped the probe: it was answered, but the server did not see the client's address/,
    );
    expect(d.reason).toMatch(
      /So the server saw 10\.244\.1\.1:\d+, the source node-a gave it, instead of 172\.18\.0\.100\./,
    );
    expect(d.reason).toMatch(
      /node-a marked it for that masquerade in nat\/KUBE-EXT-\w+: `-A KUBE-EXT-\w+ -m comment --comment "masquerade traffic for default\/web:http external destinations" -j KUBE-MARK-MASQ`\./,
    );
    expect(d.evidence?.[0]?.output).toMatch(/src=172\.18\.0\.100 dst=172\.18\.0\.2 .* dst=10\.244\.1\.1 /);
    expect(d.path.find((s) => s.culprit)).toMatchObject({ where: 'node/node-a', kind: 'netfilter' });
  });

  it('a fault that drops nothing: the DNAT that sent the probe to another backend than in the baseline', () => {
    const d = run('nat-changes-what-the-probe-sees--clusterip');
    expect(d.culprit).toMatchObject({
      kind: 'rule',
      node: 'node-a',
      where: expect.stringMatching(/^nat\/KUBE-SEP-\w+$/),
    });
    expect(d.culprit.text).toMatch(/-j DNAT --to-destination 10\.244\.1\.4:8080$/);
    expect(d.reason).toContain('it was answered, by web-b where the baseline was answered by web-a.');
    expect(d.reason).toMatch(/nat\/KUBE-SVC-\w+ chose that endpoint/);
    // the same trace with the same backend as in the baseline: no rewrite changed anything, no culprit
    const f = fixture('nat-changes-what-the-probe-sees--clusterip');
    const unchanged = { observed: 'ok', detail: { servedBy: 'web-b' } };
    expect(
      diagnose({ probe: f.probe, phase: f.phase, checks: f.checks, trace: f.probe.trace, baseline: unchanged }),
    ).toBeUndefined();
  });

  it('a connect() that failed with ENETUNREACH before any packet: the route lookup, what it answered and the table', () => {
    const f = fixture('cilium-kube-proxy-forward-race--external');
    const flows = { clientPod: 'node-a', client: '172.18.0.2', target: { ip: '10.96.0.20', port: 80 } };
    const trace = { ...f.probe.trace, events: [], facts: [], flows };
    const routeLookup = {
      get: { command: 'ip -4 route get 10.96.0.20', output: 'RTNETLINK answers: Network is unreachable' },
      table: {
        command: 'ip -4 route show table main',
        output: '10.244.1.0/24 dev cni0 scope link\n172.18.0.0/24 dev eth0',
      },
    };
    const probe = {
      ...f.probe,
      summary: 'node/node-a -> 10.96.0.20:80 = unreachable (connect() failed in the client with ENETUNREACH)',
      detail: { packets: [], connectErrno: 'ENETUNREACH', routeLookup },
    };
    const d = diagnose({ probe, phase: 'faulted', checks: [], trace, address: () => '172.18.0.2' });
    expect(d?.culprit).toEqual({
      kind: 'kernel',
      node: 'node/node-a',
      where: 'route lookup at connect()',
      text: 'ENETUNREACH: no usable route to 10.96.0.20 (RTNETLINK answers: Network is unreachable)',
    });
    expect(d?.reason).toMatch(/its table has no default route, and no route in it covers 10\.96\.0\.20\.$/);
    expect(d?.evidence).toEqual([
      { where: 'node/node-a', ...routeLookup.get },
      { where: 'node/node-a', ...routeLookup.table },
    ]);
    // refused at once is no routing failure
    const refused = { ...probe, detail: { ...probe.detail, connectErrno: 'ECONNREFUSED' } };
    expect(
      diagnose({ probe: refused, phase: 'faulted', checks: [], trace, address: () => '172.18.0.2' }),
    ).toBeUndefined();
  });

  it("a chain's policy DROP: the chain, the policy, and the chains the packet came back from without a verdict", () => {
    const f = fixture('cilium-kube-proxy-forward-race--external');
    const packet = { proto: 'tcp', src: '10.244.1.2', sport: 40000, dst: '10.244.1.3', dport: 8080, flags: 'SYN' };
    const rule = (chain: string, verdict: string, rule?: string) =>
      ({ kind: 'rule', at: 1, node: 'node-a', table: 'filter', chain, verdict, rule, packet, id: 'ab12' }) as const;
    const events = [
      rule(
        'FORWARD',
        'JUMP',
        '-4 -t filter -A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD',
      ),
      rule('FORWARD', 'policy DROP'),
    ];
    const flows = { clientPod: 'client', client: '10.244.1.2', target: { ip: '10.244.1.3', port: 8080 } };
    const trace = { ...f.probe.trace, events, facts: [], flows };
    const probe = { ...f.probe, summary: 'client -> 10.244.1.3:8080 = timeout', detail: { packets: [] } };
    const d = diagnose({ probe, phase: 'faulted', checks: [], trace });
    expect(d?.culprit).toEqual({ kind: 'rule', node: 'node-a', where: 'filter/FORWARD', text: '-P FORWARD DROP' });
    expect(d?.reason).toMatch(
      /^node-a's filter FORWARD chain dropped the client's packet tcp 10\.244\.1\.2:40000 > 10\.244\.1\.3:8080 \[SYN\] by its policy DROP: no rule of the chain accepted it \(it came back from KUBE-FORWARD without one\)\. .*the FORWARD policy DROP Docker sets/,
    );
  });

  it('a node that does not forward: the interface, ip_forward and its forwarding setting, read at the drop', () => {
    const f = fixture('cilium-kube-proxy-forward-race--external');
    const packet = { proto: 'tcp', src: '10.244.1.2', sport: 43476, dst: '10.244.2.2', dport: 8080, flags: 'SYN' };
    const cause = { kind: 'forwarding-off', iface: 'cni0', ipForward: 0, ifaceForwarding: 0 } as const;
    const events = [
      {
        kind: 'drop',
        at: 1,
        where: 'node/node-a',
        reason: 'IP_INADDRERRORS',
        location: 'ip_error+0x94',
        iface: 'cni0',
        packet,
        cause,
      },
    ] as const;
    const flows = { clientPod: 'client', client: '10.244.1.2', target: { ip: '10.244.2.2', port: 8080 } };
    const trace = { ...f.probe.trace, events: [...events], facts: [], flows };
    const probe = { ...f.probe, summary: 'client -> 10.244.2.2:8080 = timeout', detail: { packets: [] } };
    const d = diagnose({ probe, phase: 'faulted', checks: [], trace });
    expect(d?.culprit).toEqual({
      kind: 'kernel',
      node: 'node/node-a',
      where: 'IPv4 forwarding on cni0',
      text: 'net.ipv4.ip_forward = 0, net.ipv4.conf.cni0.forwarding = 0',
    });
    expect(d?.reason).toMatch(/net\.ipv4\.ip_forward is 0 on node-a, which sets every interface's forwarding to 0/);
    expect(d?.evidence?.[0]?.output).toBe('net.ipv4.ip_forward = 0\nnet.ipv4.conf.cni0.forwarding = 0');
  });

  it('a targetPort nothing listens on: the RST of the pod, what it listens on, and no "un-NATed" story', () => {
    const f = fixture('cilium-kube-proxy-forward-race--external');
    const syn = { proto: 'tcp', src: '10.244.1.2', sport: 50022, dst: '10.244.1.3', dport: 80, flags: 'SYN' };
    const rst = { proto: 'tcp', src: '10.244.1.3', sport: 80, dst: '10.244.1.2', dport: 50022, flags: 'ACK RST' };
    const cause = { kind: 'no-listener' as const, port: 80, listening: ['0.0.0.0:8080'] };
    const events = [
      // the reply as traced at PREROUTING, before its reverse NAT
      {
        kind: 'rule',
        at: 2,
        node: 'node-a',
        table: 'mangle',
        chain: 'PREROUTING',
        verdict: 'policy ACCEPT',
        packet: rst,
        id: 'r1',
      },
      {
        kind: 'drop',
        at: 1,
        where: 'pod/web',
        reason: 'NO_SOCKET',
        location: 'tcp_v4_rcv+0x99',
        iface: 'eth0',
        packet: syn,
        cause,
      },
    ] as ProbeTraceResult['events'];
    const flows = { clientPod: 'client', client: '10.244.1.2', target: { ip: '10.96.0.20', port: 80 } };
    const trace = { ...f.probe.trace, events, facts: [], flows };
    const packets = [
      '09:50:12.329722 IP 10.244.1.2.50022 > 10.96.0.20.80: Flags [S], seq 610866293, win 64240, length 0',
      '09:50:12.329883 IP 10.96.0.20.80 > 10.244.1.2.50022: Flags [R.], seq 0, ack 610866294, win 0, length 0',
    ];
    const probe = { ...f.probe, summary: 'client -> 10.96.0.20:80 = refused', detail: { packets } };
    const d = diagnose({ probe, phase: 'faulted', checks: [], trace });
    expect(d?.culprit).toMatchObject({ kind: 'socket', node: 'pod/web', where: 'no listener on 10.244.1.3:80' });
    expect(d?.reason).toMatch(/pod\/web listens on 0\.0\.0\.0:8080, not on port 80\./);
    expect(d?.reason).toMatch(/port 80 is the Service's targetPort/);
    expect(d?.reason).toMatch(/The client got the RST from 10\.96\.0\.20:80: connect\(\) failed with ECONNREFUSED\./);
    // without the pod's drop, the reply that came back NATed is no INVALID un-NATed packet either
    const bare = { ...trace, events: events.slice(0, 1) };
    expect(diagnose({ probe, phase: 'faulted', checks: [], trace: bare })).toBeUndefined();
  });

  it('clusterip-from-outside-without-masquerade: the SYN-ACK sent by the backend node straight to the client, around the DNAT node', () => {
    const d = run('clusterip-from-outside-without-masquerade--from-outside');
    expect(d.culprit).toMatchObject({
      kind: 'kernel',
      node: 'node-a',
      where: 'nat (the DNATed request left un-masqueraded)',
    });
    expect(d.culprit.text).toMatch(
      /^SYN-ACK 10\.244\.2\.2:8080 > 172\.18\.0\.100:\d+ sent by node-b straight to the client/,
    );
    expect(d.packet).toMatchObject({ src: '10.244.2.2', sport: 8080, dst: '172.18.0.100', flags: 'SYN ACK' });
    expect(d.reason).toContain("forwarded it with the client's own address 172.18.0.100: nothing masqueraded it");
    expect(d.reason).toContain('(no KUBE-MARK-MASQ rule matched it on node-a)');
    expect(d.reason).toContain('not back through node-a');
    expect(d.reason).toContain('SYN_SENT [UNREPLIED]');
    // the reply never crossed node-a: no bridge, no br_netfilter story
    expect(d.reason).not.toMatch(/bridged|br_netfilter|bridge-nf/);
    expect(d.evidence?.map((e) => e.where)).toEqual(['node/node-a', 'node/node-b']);
  });

  it('flannel-subnet-route-missing: the node that sent the SYN (and the SYN-ACK) by its default route, with its table, not the gateway', () => {
    for (const [probe, packet] of [
      ['to-node-b', { src: '10.244.1.2', dst: '10.244.2.3', flags: 'SYN' }],
      ['from-node-b', { src: '10.244.1.3', dst: '10.244.2.2', flags: 'SYN ACK' }],
    ] as const) {
      const d = run(`flannel-subnet-route-missing--${probe}`);
      expect(d.culprit, probe).toMatchObject({ kind: 'kernel', node: 'node/node-a', where: `route to ${packet.dst}` });
      expect(d.culprit.text).toBe(
        `no route for ${packet.dst}: sent by the default route to the gateway, which dropped it`,
      );
      expect(d.packet).toMatchObject(packet);
      expect(d.reason).toContain(`node-a's table has no route for ${packet.dst} but its default route`);
      // the gateway forwards nothing by design: not the story
      expect(d.reason).not.toContain('ip_forward');
      expect(d.evidence?.[0]).toMatchObject({ where: 'node/node-a', command: 'ip -4 route show' });
      expect(d.evidence?.[0]?.output).not.toContain('10.244.2.0/24');
    }
  });

  it('e2e-hostport-hostip-no-conflict: the re-route after the localhost DNAT, with route_localnet off on all and cni0', () => {
    const d = run('e2e-hostport-hostip-no-conflict--pod1-localhost');
    expect(d.culprit).toMatchObject({
      kind: 'kernel',
      node: 'node/node-a',
      where: 'route_localnet on cni0',
      text: 'net.ipv4.conf.all.route_localnet = 0, net.ipv4.conf.cni0.route_localnet = 0',
    });
    expect(d.packet).toMatchObject({ src: '127.0.0.1', dst: '10.244.1.2', dport: 80, flags: 'SYN' });
    expect(d.reason).toContain("with no rule's verdict");
    expect(d.reason).toContain('out cni0');
  });

  it("forward-policy-drop-docker: FORWARD's policy DROP, with the policy's own counter read with the trace", () => {
    const d = run('forward-policy-drop-docker--other-node');
    expect(d.culprit).toEqual({ kind: 'rule', node: 'node-a', where: 'filter/FORWARD', text: '-P FORWARD DROP' });
    expect(d.reason).toMatch(
      /Its counter on node-a reads \d+ packets? taken by the policy \(`Chain FORWARD \(policy DROP \d+ packets/,
    );
    expect(d.evidence?.[0]).toMatchObject({ where: 'node/node-a', command: 'iptables -t filter -L FORWARD -v -x -n' });
  });

  it('udp-stale-conntrack-scale-to-zero: the conntrack entry that keeps a deleted pod as the DNAT, not the pods that drop the flooded frame', () => {
    const f = fixture('udp-stale-conntrack-scale-to-zero--same-socket');
    const d = run('udp-stale-conntrack-scale-to-zero--same-socket');
    expect(d.culprit).toEqual({
      kind: 'conntrack',
      node: 'node-a',
      where: 'entry',
      text: 'udp 10.244.1.2:40000 > 10.96.0.10:53 DNAT to 10.244.1.3:53',
    });
    expect(d.packet).toMatchObject({ src: '10.244.1.2', dst: '10.96.0.10', sport: 40000, dport: 53 });
    expect(d.reason).toContain('no nat rule saw the packet');
    expect(d.reason).toContain('pod/dns-new and pod/client dropped it as not theirs (OTHERHOST)');
    expect(d.reason).toContain('d2:de:ed:ac:56:0b');
    expect(d.path.find((s) => s.culprit)).toMatchObject({ where: 'node/node-a', kind: 'conntrack', inferred: true });
    // the copy the bridge flooded back to the client is drawn as received, not sent
    expect(d.path.filter((s) => s.where === 'pod/client' && s.kind === 'send').map((s) => s.packet)).toEqual([
      '10.244.1.2:40000 > 10.96.0.10:53 udp',
    ]);
    // a DNAT rule to the gone address is the culprit when one saw the packet (a pod deleted but still an endpoint)
    const events = f.probe.trace.events;
    const withRule = [
      {
        ...events[0]!,
        kind: 'rule' as const,
        table: 'nat',
        chain: 'KUBE-SEP-X',
        verdict: 'ACCEPT',
        rule: '-4 -t nat -A KUBE-SEP-X -p udp -m udp -j DNAT --to-destination 10.244.1.3:53',
      },
      ...events,
    ];
    const byRule = diagnose({
      probe: f.probe,
      phase: f.phase,
      checks: f.checks,
      trace: { ...f.probe.trace, events: withRule as typeof events },
    });
    expect(byRule?.culprit).toEqual({
      kind: 'rule',
      node: 'node-a',
      where: 'nat/KUBE-SEP-X',
      text: '-A KUBE-SEP-X -p udp -m udp -j DNAT --to-destination 10.244.1.3:53',
    });
    // a client that sent to the gone address itself: the node's neighbour for it
    const direct = diagnose({
      probe: { ...f.probe, summary: f.probe.summary.replace('10.96.0.10:53', '10.244.1.3:53') },
      phase: f.phase,
      checks: f.checks,
      trace: { ...f.probe.trace, flows: { ...f.probe.trace.flows!, target: { ip: '10.244.1.3', port: 53 } } },
    });
    expect(direct?.culprit).toMatchObject({ kind: 'kernel', node: 'node/node-a', where: 'neighbour 10.244.1.3' });
    expect(direct?.reason).toContain('The client sent to 10.244.1.3 itself');
  });

  it("a deleted pod's address on another node: the node that could not deliver (NEIGH_FAILED), not its ICMP error read as an un-NATed reply", () => {
    const d = run('deleted-pod-flannel--pod');
    expect(d.culprit).toEqual({
      kind: 'kernel',
      node: 'node/node-b',
      where: expect.stringMatching(/^neigh_invalidate/),
      text: 'NEIGH_FAILED on cni0',
    });
    expect(d.reason).toContain('no ARP answer for 10.244.2.2');
  });

  it('finds no culprit in an empty trace', () => {
    const f = fixture('cilium-kube-proxy-forward-race--external');
    const trace = { ...f.probe.trace, events: [], facts: [] };
    expect(
      diagnose({ probe: { ...f.probe, detail: { packets: [] } }, phase: 'faulted', checks: [], trace }),
    ).toBeUndefined();
  });
});

describe('policy facts', () => {
  it("read each built-in chain's policy and packet count from iptables -L -v -x -n", () => {
    const listing =
      'Chain INPUT (policy ACCEPT 7 packets, 420 bytes)\n pkts bytes target\nChain FORWARD (policy DROP 3 packets, 180 bytes)\nChain KUBE-FORWARD (1 references)\n';
    expect(policyFacts('node-a', listing)).toEqual([
      {
        kind: 'policy',
        node: 'node-a',
        chain: 'INPUT',
        policy: 'ACCEPT',
        packets: 7,
        line: 'Chain INPUT (policy ACCEPT 7 packets, 420 bytes)',
      },
      {
        kind: 'policy',
        node: 'node-a',
        chain: 'FORWARD',
        policy: 'DROP',
        packets: 3,
        line: 'Chain FORWARD (policy DROP 3 packets, 180 bytes)',
      },
    ]);
  });
});
