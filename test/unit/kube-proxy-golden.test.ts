// Golden tests: the rule writer against what upstream kube-proxy writes for the same Services and
// EndpointSlices. The expected lines are our own test data, written down from the upstream files
// named in each test (expected dumps where upstream has one, else derived from that release's
// syncProxyRules). Upstream's dumps are iptables-restore input; ours is iptables-save form, so both
// sides go through `saveForm` (argument order, /32, --set-xmark, quoted comments) and are compared
// chain by chain. Deliberate differences: docs/kube-proxy-fidelity.md.
import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { kubeProxyLayout, type KubeProxyLayout } from '../../clusters/netns/kube-proxy-layout.ts';
import { kubeProxyJumps, kubeProxyRules, savedProbability } from '../../clusters/netns/kube-proxy-rules.ts';

/** One rule of iptables-restore input in the form iptables-save prints it. */
export function saveForm(rule: string): string {
  const words = [...rule.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => (m[1] !== undefined ? `"${m[1]}"` : m[2]!));
  const [verb, chain, ...rest] = words;
  const front: Record<string, string> = {};
  const tail: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const neg = rest[i] === '!' && ['-s', '-d', '-i', '-o', '-p'].includes(rest[i + 1]!);
    const opt = neg ? rest[i + 1]! : rest[i]!;
    if (['-s', '-d', '-i', '-o', '-p'].includes(opt) && (neg || rest[i - 1] !== '!')) {
      let value = rest[i + (neg ? 2 : 1)]!;
      if ((opt === '-s' || opt === '-d') && !value.includes('/')) value += '/32';
      front[opt] = `${neg ? '! ' : ''}${opt} ${value}`;
      i += neg ? 2 : 1;
      continue;
    }
    tail.push(rest[i]!);
  }
  let out = [verb, chain, ...['-s', '-d', '-i', '-o', '-p'].flatMap((o) => (front[o] ? [front[o]] : [])), ...tail].join(' ');
  out = out
    .replace(/--comment ([^"\s]+)/g, '--comment "$1"')
    .replace(/0x0*([0-9a-f]+)/g, '0x$1')
    .replace(/-j MARK --or-mark (\S+)/, '-j MARK --set-xmark $1/$1')
    .replace(/-j MARK --xor-mark (\S+)/, '-j MARK --set-xmark $1/0x0')
    .replace(/-j MARK --set-xmark (0x[0-9a-f]+)$/, '-j MARK --set-xmark $1/$1')
    .replace(/-j REJECT$/, '-j REJECT --reject-with icmp-port-unreachable')
    .replace(/--probability ([\d.]+)/, (_, p: string) => `--probability ${savedProbability(Number(p))}`);
  return out;
}

/** Rules per chain, in order; the per-service chains KUBE-SERVICES/KUBE-NODEPORTS/KUBE-EXTERNAL-SERVICES as sorted sets (kube-proxy walks a Go map), the nodeports tail-call kept last. */
function byChain(rules: readonly string[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const r of rules.map(saveForm)) (out[r.split(' ')[1]!] ??= []).push(r);
  for (const c of ['KUBE-SERVICES', 'KUBE-NODEPORTS', 'KUBE-EXTERNAL-SERVICES']) {
    const last = out[c]?.filter((r) => r.includes('this must be the last rule')) ?? [];
    if (out[c]) out[c] = [...out[c].filter((r) => !last.includes(r)).sort(), ...last];
  }
  return out;
}

// The inputs of upstream TestOverallIPTablesRules we can express: ns1/svc1 (ClusterIP, one
// endpoint), ns3/svc3 (NodePort 3003, one non-local endpoint), ns6/svc6 (no endpoints).
const svc = (ns: string, name: string, ip: string, nodePort?: number): V1Service => ({
  metadata: { namespace: ns, name },
  spec: { type: nodePort ? 'NodePort' : 'ClusterIP', clusterIP: ip, ports: [{ name: 'p80', port: 80, protocol: 'TCP', targetPort: 80, ...(nodePort ? { nodePort } : {}) }] },
});
const slice = (ns: string, name: string, ip: string): V1EndpointSlice => ({
  addressType: 'IPv4',
  metadata: { namespace: ns, name: `${name}-1`, labels: { 'kubernetes.io/service-name': name } },
  endpoints: [{ addresses: [ip] }],
  ports: [{ name: 'p80', port: 80, protocol: 'TCP' }],
});
const services = [svc('ns1', 'svc1', '172.30.0.41'), svc('ns3', 'svc3', '172.30.0.43', 3003), svc('ns6', 'svc6', '172.30.0.46')];
const slices = [slice('ns1', 'svc1', '10.180.0.1'), slice('ns3', 'svc3', '10.180.0.3')];

function ours(layout: KubeProxyLayout, nfacctCounters: boolean) {
  const r = kubeProxyRules({ layout, services, slices, clusterCIDR: '10.0.0.0/8', nodeName: 'test-node', beLiberal: false, nfacctCounters });
  return { filter: byChain(r.tables.filter.rules), nat: byChain(r.tables.nat.rules), chains: { filter: new Set(r.tables.filter.chains), nat: new Set(r.tables.nat.chains) } };
}
const count = (t: Record<string, string[]>) => Object.values(t).reduce((n, r) => n + r.length, 0);

describe('kube-proxy rules against upstream', () => {
  it('newest layout (nfacct era): kubernetes TestOverallIPTablesRules', () => {
    // aroradaman/kubernetes @ 4177b600d4b97a67b765a18ddeeb295ef757b212 (master after v1.31),
    // pkg/proxy/iptables/proxier_test.go, TestOverallIPTablesRules: the lines for svc1, svc3, svc6
    // and the service-independent rules. The fake iptables there has no --random-fully.
    const filter = [
      '-A KUBE-SERVICES -m comment --comment "ns6/svc6:p80 has no endpoints" -m tcp -p tcp -d 172.30.0.46 --dport 80 -j REJECT',
      '-A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP',
      '-A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name ct_state_invalid_dropped_pkts -j DROP',
      '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT',
      '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
    ];
    const nat = [
      '-A KUBE-NODEPORTS -m comment --comment ns3/svc3:p80 -m tcp -p tcp -d 127.0.0.0/8 --dport 3003 -m nfacct --nfacct-name localhost_nps_accepted_pkts -j KUBE-EXT-X27LE4BHSL4DOUIK',
      '-A KUBE-NODEPORTS -m comment --comment ns3/svc3:p80 -m tcp -p tcp --dport 3003 -j KUBE-EXT-X27LE4BHSL4DOUIK',
      '-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O',
      '-A KUBE-SERVICES -m comment --comment "ns3/svc3:p80 cluster IP" -m tcp -p tcp -d 172.30.0.43 --dport 80 -j KUBE-SVC-X27LE4BHSL4DOUIK',
      '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS',
      '-A KUBE-EXT-X27LE4BHSL4DOUIK -m comment --comment "masquerade traffic for ns3/svc3:p80 external destinations" -j KUBE-MARK-MASQ',
      '-A KUBE-EXT-X27LE4BHSL4DOUIK -j KUBE-SVC-X27LE4BHSL4DOUIK',
      '-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000',
      '-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN',
      '-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000',
      '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE',
      '-A KUBE-SEP-OYPFS5VJICHGATKP -m comment --comment ns3/svc3:p80 -s 10.180.0.3 -j KUBE-MARK-MASQ',
      '-A KUBE-SEP-OYPFS5VJICHGATKP -m comment --comment ns3/svc3:p80 -m tcp -p tcp -j DNAT --to-destination 10.180.0.3:80',
      '-A KUBE-SEP-SXIVWICOYRO3J4NJ -m comment --comment ns1/svc1:p80 -s 10.180.0.1 -j KUBE-MARK-MASQ',
      '-A KUBE-SEP-SXIVWICOYRO3J4NJ -m comment --comment ns1/svc1:p80 -m tcp -p tcp -j DNAT --to-destination 10.180.0.1:80',
      '-A KUBE-SVC-X27LE4BHSL4DOUIK -m comment --comment "ns3/svc3:p80 cluster IP" -m tcp -p tcp -d 172.30.0.43 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ',
      '-A KUBE-SVC-X27LE4BHSL4DOUIK -m comment --comment "ns3/svc3:p80 -> 10.180.0.3:80" -j KUBE-SEP-OYPFS5VJICHGATKP',
      '-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ',
      '-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> 10.180.0.1:80" -j KUBE-SEP-SXIVWICOYRO3J4NJ',
    ];
    const got = ours({ ...kubeProxyLayout('1.34'), randomFully: false }, true);
    expect(got.filter).toEqual(byChain(filter));
    expect(got.nat).toEqual(byChain(nat));
    expect(count(got.filter) + count(got.nat)).toBe(24);
    // the chain lines of that dump (KUBE-NODEPORTS in filter holds health-check rules of services we leave out)
    expect(got.chains.filter).toEqual(new Set(['KUBE-NODEPORTS', 'KUBE-SERVICES', 'KUBE-EXTERNAL-SERVICES', 'KUBE-FIREWALL', 'KUBE-FORWARD', 'KUBE-PROXY-FIREWALL']));
    expect(got.chains.nat).toEqual(new Set(['KUBE-NODEPORTS', 'KUBE-SERVICES', 'KUBE-EXT-X27LE4BHSL4DOUIK', 'KUBE-MARK-MASQ', 'KUBE-POSTROUTING', 'KUBE-SEP-OYPFS5VJICHGATKP', 'KUBE-SEP-SXIVWICOYRO3J4NJ', 'KUBE-SVC-X27LE4BHSL4DOUIK', 'KUBE-SVC-XPGD46QRK7WJZT7O']));
    // without the nfacct counters (no nfnetlink_acct, as in the lab) the same rules lose only the nfacct matches
    const plain = ours({ ...kubeProxyLayout('1.34'), randomFully: false }, false);
    expect(plain.filter['KUBE-FORWARD']![0]).toBe('-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP');
    expect(plain.nat['KUBE-NODEPORTS']).toHaveLength(1);
  });

  it('1.16 - 1.19: masquerade in KUBE-SERVICES, comment-less endpoint rules, --random-fully, two clusterCIDR conntrack rules', () => {
    // Derived from syncProxyRules in generals-space/kubernetes @ 5593abf9773cf700c148bbceadf30597f078779e
    // pkg/proxy/iptables/proxier.go (a 1.16 - 1.18 tree: MASQUERADE with --random-fully, KUBE-MARK-MASQ
    // --set-xmark, cluster IP masquerade rule `! -s clusterCIDR` in KUBE-SERVICES, NodePorts
    // KUBE-MARK-MASQ + KUBE-SVC), with appendServiceCommentLocked discarding its result (no
    // comment on KUBE-SVC -> KUBE-SEP and KUBE-SEP rules), and KUBE-FORWARD as in
    // CentaurusInfra/arktos @ 5035a932398fe30d83a6d36654a297b1bd34d7c5 pkg/proxy/iptables/proxier.go.
    const filter = [
      '-A KUBE-SERVICES -m comment --comment "ns6/svc6:p80 has no endpoints" -m tcp -p tcp -d 172.30.0.46/32 --dport 80 -j REJECT',
      '-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP',
      '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x00004000/0x00004000 -j ACCEPT',
      '-A KUBE-FORWARD -s 10.0.0.0/8 -m comment --comment "kubernetes forwarding conntrack pod source rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
      '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack pod destination rule" -d 10.0.0.0/8 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
    ];
    const nat = [
      '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -m mark --mark 0x00004000/0x00004000 -j MASQUERADE --random-fully',
      '-A KUBE-MARK-MASQ -j MARK --set-xmark 0x00004000/0x00004000',
      '-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41/32 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ',
      '-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41/32 --dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O',
      '-A KUBE-SERVICES -m comment --comment "ns3/svc3:p80 cluster IP" -m tcp -p tcp -d 172.30.0.43/32 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ',
      '-A KUBE-SERVICES -m comment --comment "ns3/svc3:p80 cluster IP" -m tcp -p tcp -d 172.30.0.43/32 --dport 80 -j KUBE-SVC-X27LE4BHSL4DOUIK',
      '-A KUBE-NODEPORTS -m comment --comment ns3/svc3:p80 -m tcp -p tcp --dport 3003 -j KUBE-MARK-MASQ',
      '-A KUBE-NODEPORTS -m comment --comment ns3/svc3:p80 -m tcp -p tcp --dport 3003 -j KUBE-SVC-X27LE4BHSL4DOUIK',
      '-A KUBE-SVC-XPGD46QRK7WJZT7O -j KUBE-SEP-SXIVWICOYRO3J4NJ',
      '-A KUBE-SEP-SXIVWICOYRO3J4NJ -s 10.180.0.1/32 -j KUBE-MARK-MASQ',
      '-A KUBE-SEP-SXIVWICOYRO3J4NJ -m tcp -p tcp -j DNAT --to-destination 10.180.0.1:80',
      '-A KUBE-SVC-X27LE4BHSL4DOUIK -j KUBE-SEP-OYPFS5VJICHGATKP',
      '-A KUBE-SEP-OYPFS5VJICHGATKP -s 10.180.0.3/32 -j KUBE-MARK-MASQ',
      '-A KUBE-SEP-OYPFS5VJICHGATKP -m tcp -p tcp -j DNAT --to-destination 10.180.0.3:80',
      '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS',
    ];
    for (const v of ['1.16', '1.18', '1.19']) {
      const got = ours(kubeProxyLayout(v), false);
      expect(got.filter).toEqual(byChain(filter));
      expect(got.nat).toEqual(byChain(nat));
      expect(count(got.filter) + count(got.nat)).toBe(20);
    }
    // 1.15: the same without --random-fully (PR 78547 is 1.16); 1.14: also without the INVALID DROP (PR 74840 is 1.15)
    const v15 = ours(kubeProxyLayout('1.15'), false);
    expect(v15.nat['KUBE-POSTROUTING']).toEqual([saveForm(nat[0]!.replace(' --random-fully', ''))]);
    expect(v15.filter).toEqual(byChain(filter));
    const v14 = ours(kubeProxyLayout('1.14'), false);
    expect(v14.filter['KUBE-FORWARD']).toEqual(byChain(filter.slice(2))['KUBE-FORWARD']);
  });

  it('jumps from built-in chains, in the order they end up (each prepended when missing)', () => {
    // newest: iptablesJumpChains + iptablesKubeletJumpChains in aroradaman/kubernetes @ 4177b600, pkg/proxy/iptables/proxier.go
    // 1.16 - 1.19: iptablesJumpChains in generals-space/kubernetes @ 5593abf9 (INPUT -> KUBE-SERVICES is listed as "Present in
    // kube 1.13 - 1.19. Removed by #95252" in later releases' iptablesCleanupOnlyChains)
    const order = (v: string, chain: string) =>
      kubeProxyJumps(kubeProxyLayout(v)).filter((j) => j.table === 'filter' && j.chain === chain).map((j) => /-j (\S+)$/.exec(j.spec)?.[1]).reverse();
    expect(order('1.34', 'FORWARD')).toEqual(['KUBE-PROXY-FIREWALL', 'KUBE-FORWARD', 'KUBE-SERVICES', 'KUBE-EXTERNAL-SERVICES']);
    expect(order('1.34', 'INPUT')).toEqual(['KUBE-FIREWALL', 'KUBE-PROXY-FIREWALL', 'KUBE-NODEPORTS', 'KUBE-EXTERNAL-SERVICES']);
    expect(order('1.34', 'OUTPUT')).toEqual(['KUBE-FIREWALL', 'KUBE-PROXY-FIREWALL', 'KUBE-SERVICES']);
    expect(order('1.18', 'FORWARD')).toEqual(['KUBE-FORWARD', 'KUBE-SERVICES']);
    expect(order('1.18', 'INPUT')).toEqual(['KUBE-SERVICES', 'KUBE-EXTERNAL-SERVICES']);
    expect(order('1.20', 'FORWARD')).toEqual(['KUBE-FORWARD', 'KUBE-SERVICES', 'KUBE-EXTERNAL-SERVICES']);
    expect(order('1.20', 'INPUT')).toEqual(['KUBE-EXTERNAL-SERVICES']);
    expect(order('1.21', 'INPUT')).toEqual(['KUBE-NODEPORTS', 'KUBE-EXTERNAL-SERVICES']);
  });
});
