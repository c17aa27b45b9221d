import { describe, expect, it } from 'vitest';
import { endpointSlices, serviceObject } from '../../src/contract/kube-objects.ts';
import { IptablesModel } from '../../src/dataplane/iptables-ops.ts';
import { kubeProxyLayout } from '../../src/dataplane/kube-proxy-layout.ts';
import { chainName, kubeProxyRules, type RuleInput } from '../../src/dataplane/kube-proxy-rules.ts';
import { ciliumStart, kubeProxyStart } from '../../src/dataplane/node-components.ts';
import { Topology } from '../../src/model/scenario-schema.ts';

type ServiceInput = Parameters<typeof Topology.parse>[0] extends infer T ? T : never;
const service = (extra: Record<string, unknown> = {}) =>
  Topology.parse({
    cni: 'bridge',
    nodes: [{ name: 'n1', podCIDR: '10.244.1.0/24' }],
    pods: [
      { name: 'a', node: 'n1' },
      { name: 'b', node: 'n1' },
      { name: 'c', node: 'n1' },
    ],
    services: [
      {
        name: 'web',
        clusterIP: '10.96.0.20',
        ports: [{ name: 'http', port: 80, targetPort: 8080 }],
        endpoints: ['a', 'b', 'c'],
        ...extra,
      },
    ],
  } satisfies ServiceInput as never).services[0]!;
const pods = new Map([
  ['a', { ip: '10.244.1.3', node: 'n1' }],
  ['b', { ip: '10.244.2.3', node: 'n2' }],
  ['c', { ip: '10.244.3.3', node: 'n3' }],
]);
const input = (version: string, extra: Partial<RuleInput> = {}, svc = service()): RuleInput => ({
  layout: kubeProxyLayout(version),
  services: [serviceObject(svc)],
  slices: endpointSlices(svc, pods),
  clusterCIDR: '10.244.0.0/16',
  masqueradeAll: false,
  nodeName: 'n1',
  beLiberal: false,
  nfacctCounters: false,
  ...extra,
});
const text = (i: RuleInput) => {
  const r = kubeProxyRules(i);
  return [...r.tables.filter.rules, ...r.tables.nat.rules].join('\n');
};

describe('kube-proxy rule writer', () => {
  it('names chains exactly as kube-proxy does', () => {
    // the chain every cluster has for default/kubernetes:https
    expect(chainName('KUBE-SVC-', 'default/kubernetes:httpstcp')).toBe('KUBE-SVC-NPX46M4PTMTKRN6Y');
  });

  it('spreads endpoints with statistic random probabilities 1/n, 1/(n-1), ..., last unconditional, ordered by "ip:port"', () => {
    const svcChain = chainName('KUBE-SVC-', 'default/web:httptcp');
    const lines = text(input('1.29'))
      .split('\n')
      .filter((l) => l.startsWith(`-A ${svcChain} -m comment`));
    expect(lines).toHaveLength(3);
    expect(lines[0]).toContain('--probability 0.33333333349');
    expect(lines[1]).toContain('--probability 0.50000000000');
    expect(lines[2]).not.toContain('statistic');
    expect(lines.map((l) => /-> ([\d.:]+)/.exec(l)?.[1])).toEqual([
      '10.244.1.3:8080',
      '10.244.2.3:8080',
      '10.244.3.3:8080',
    ]);
    // string order, as kube-proxy's endpoint cache sorts: "10.244.10.x" before "10.244.2.x"
    const reordered = new Map([...pods, ['a', { ip: '10.244.10.3', node: 'n1' }]]);
    const svc = service();
    const r = text({ ...input('1.29'), slices: endpointSlices(svc, reordered) });
    expect(
      r
        .split('\n')
        .filter((l) => l.startsWith(`-A ${svcChain} -m comment`))
        .map((l) => /-> ([\d.]+)/.exec(l)?.[1]),
    ).toEqual(['10.244.10.3', '10.244.2.3', '10.244.3.3']);
  });

  it('puts the INVALID DROP in KUBE-FORWARD by version (absent in 1.14, since 1.29 only without be_liberal; nfacct from 1.30 when the counter exists)', () => {
    const drop = '-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP';
    expect(text(input('1.14'))).not.toContain('INVALID');
    expect(text(input('1.15'))).toContain(drop);
    expect(text(input('1.20', { beLiberal: true }))).toContain(drop);
    expect(text(input('1.29'))).toContain(drop);
    expect(text(input('1.29', { beLiberal: true }))).not.toContain('INVALID');
    expect(text(input('1.30', { nfacctCounters: true }))).toContain(
      '-A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name ct_state_invalid_dropped_pkts -j DROP',
    );
    expect(text(input('1.29', { nfacctCounters: true }))).toContain(drop);
  });

  it('rejects traffic to a service without endpoints in filter KUBE-SERVICES, and its NodePort in KUBE-EXTERNAL-SERVICES', () => {
    const empty = service({
      endpoints: [],
      type: 'NodePort',
      ports: [{ name: 'http', port: 80, targetPort: 8080, nodePort: 30080 }],
    });
    const t = text(input('1.29', {}, empty));
    expect(t).toContain(
      '-A KUBE-SERVICES -d 10.96.0.20/32 -p tcp -m comment --comment "default/web:http has no endpoints" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable',
    );
    expect(t).toContain(
      '-A KUBE-EXTERNAL-SERVICES -p tcp -m comment --comment "default/web:http has no endpoints" -m addrtype --dst-type LOCAL -m tcp --dport 30080 -j REJECT --reject-with icmp-port-unreachable',
    );
    expect(t).not.toContain('KUBE-SVC-');
  });

  it('leaves out endpoints that are not ready, and uses serving terminating ones only when none is ready (1.26+)', () => {
    const svc = service({
      endpoints: [
        { pod: 'a', ready: false },
        { pod: 'b', terminating: true },
      ],
    });
    expect(text(input('1.29', {}, svc))).toContain('--to-destination 10.244.2.3:8080');
    expect(text(input('1.29', {}, svc))).not.toContain('10.244.1.3:8080');
    expect(text(input('1.25', {}, svc))).toContain('has no endpoints');
  });

  it('writes externalTrafficPolicy Local as KUBE-XLB before 1.24 and KUBE-EXT/KUBE-SVL from 1.24', () => {
    const local = service({
      type: 'NodePort',
      externalTrafficPolicy: 'Local',
      ports: [{ name: 'http', port: 80, targetPort: 8080, nodePort: 30080 }],
    });
    const old = text(input('1.20', {}, local));
    expect(old).toMatch(
      /-A KUBE-NODEPORTS -s 127.0.0.0\/8 -p tcp -m comment --comment "default\/web:http" -m tcp --dport 30080 -j KUBE-MARK-MASQ/,
    );
    expect(old).toMatch(/-A KUBE-XLB-\w+ -m comment --comment "Balancing rule 0 for default\/web:http" -j KUBE-SEP-/);
    const recent = text(input('1.29', {}, local));
    expect(recent).toMatch(
      /-A KUBE-NODEPORTS -p tcp -m comment --comment "default\/web:http" -m tcp --dport 30080 -j KUBE-EXT-/,
    );
    expect(recent).toMatch(/-A KUBE-EXT-\w+ -j KUBE-SVL-/);
    expect(recent).toMatch(/-A KUBE-SVL-\w+ -m comment --comment "default\/web:http -> 10.244.1.3:8080" -j KUBE-SEP-/);
  });

  it('ignores a Service labelled service-proxy-name (1.14 on) or headless (1.16 on): not one rule for it', () => {
    const labelled = (labels: Record<string, string>) => service({ labels });
    const proxyName = labelled({ 'service.kubernetes.io/service-proxy-name': 'foo-bar' });
    const headless = labelled({ 'service.kubernetes.io/headless': '' });
    for (const v of ['1.14', '1.20', '1.29']) {
      expect(text(input(v, {}, proxyName)), v).not.toContain('default/web');
      expect(text(input(v, {}, labelled({ team: 'a' }))), v).toContain('default/web');
    }
    expect(text(input('1.15', {}, headless))).toContain('default/web');
    expect(text(input('1.16', {}, headless))).not.toContain('default/web');
  });

  it('writes nothing for a headless Service (clusterIP None), in every release', () => {
    const headless = service({ clusterIP: 'None' });
    for (const v of ['1.14', '1.20', '1.29']) expect(text(input(v, {}, headless)), v).not.toContain('default/web');
  });

  it('masquerades off-cluster traffic to a ClusterIP only with a cluster CIDR, and every packet with masqueradeAll', () => {
    const masq = (t: string) => t.split('\n').filter((l) => /cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ$/.test(l));
    for (const v of ['1.14', '1.20', '1.29']) {
      expect(masq(text(input(v))), v).toEqual([expect.stringContaining('! -s 10.244.0.0/16 -d 10.96.0.20/32 -p tcp')]);
      expect(masq(text(input(v, { clusterCIDR: '' }))), v).toEqual([]);
      expect(masq(text(input(v, { masqueradeAll: true }))), v).toEqual([
        expect.stringMatching(/^-A KUBE-(SERVICES|SVC-\w+) -d 10.96.0.20\/32 -p tcp/),
      ]);
    }
    // before 1.18 the conntrack pair of KUBE-FORWARD matches the cluster CIDR, and is left out without one
    expect(text(input('1.14', { clusterCIDR: '' }))).not.toContain('forwarding conntrack');
    expect(text(input('1.20', { clusterCIDR: '' }))).toContain('forwarding conntrack pod source rule');
    // eTP Local: the rule sending pods' packets to the cluster-wide chain needs the CIDR too
    const local = service({
      type: 'NodePort',
      externalTrafficPolicy: 'Local',
      ports: [{ name: 'http', port: 80, targetPort: 8080, nodePort: 30080 }],
    });
    expect(text(input('1.20', {}, local))).toContain('Redirect pods trying to reach external loadbalancer VIP');
    expect(text(input('1.20', { clusterCIDR: '' }, local))).not.toContain('Redirect pods');
    expect(text(input('1.29', { clusterCIDR: '' }, local))).not.toContain('pod traffic for');
  });

  it('ensures its jumps: a restart with the jumps present moves nothing, after a reboot the last starter is first', () => {
    const layout = kubeProxyLayout('1.29');
    const rules = kubeProxyRules(input('1.29'));
    const first = (m: IptablesModel) => /-A FORWARD (.*)$/m.exec(m.save(['filter']))?.[1] ?? '';
    const m = new IptablesModel().apply(kubeProxyStart(layout, rules)).apply(ciliumStart());
    expect(first(m)).toContain('CILIUM_FORWARD');
    m.apply(kubeProxyStart(layout, rules));
    expect(first(m)).toContain('CILIUM_FORWARD'); // a plain restart: every jump already there
    const rebooted = new IptablesModel().apply(ciliumStart()).apply(kubeProxyStart(layout, rules));
    expect(first(rebooted)).toContain('KUBE-PROXY-FIREWALL');
    // 1.14's start-up IPVS clean-up deleted the shared jump, so even a restart moved KUBE-FORWARD to the top
    const old = kubeProxyLayout('1.14');
    const oldRules = kubeProxyRules(input('1.14'));
    const m14 = new IptablesModel()
      .apply(kubeProxyStart(old, oldRules))
      .apply(ciliumStart())
      .apply(kubeProxyStart(old, oldRules));
    expect(first(m14)).toContain('-j KUBE-FORWARD');
  });
});
