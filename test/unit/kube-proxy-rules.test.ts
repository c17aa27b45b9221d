import { describe, expect, it } from 'vitest';
import { endpointSliceObject, serviceObject } from '../../clusters/kube-objects.ts';
import { chainName, kubeProxyRestore, KUBE_PROXY_PROFILES } from '../../clusters/netns/kube-proxy-rules.ts';

const svc = { name: 'web', namespace: 'default', clusterIP: '10.96.0.20', ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' as const }], endpoints: ['a', 'b', 'c'] };
const pods = new Map([
  ['a', { ip: '10.244.1.3', node: 'n1' }],
  ['b', { ip: '10.244.2.3', node: 'n2' }],
  ['c', { ip: '10.244.3.3', node: 'n3' }],
]);
const rules = (version: string, beLiberal = false) =>
  kubeProxyRestore({ profile: KUBE_PROXY_PROFILES[version]!, services: [serviceObject(svc)], slices: [endpointSliceObject(svc, pods)], clusterCIDR: '10.244.0.0/16', beLiberal });

describe('kube-proxy rule writer', () => {
  it('names chains exactly as kube-proxy does', () => {
    // the chain every cluster has for default/kubernetes:https
    expect(chainName('KUBE-SVC-', 'default/kubernetes:httpstcp')).toBe('KUBE-SVC-NPX46M4PTMTKRN6Y');
  });

  it('spreads endpoints with statistic random probabilities 1/n, 1/(n-1), ..., last unconditional', () => {
    const svcChain = chainName('KUBE-SVC-', 'default/web:httptcp');
    const lines = rules('1.29').split('\n').filter((l) => l.startsWith(`-A ${svcChain} -m comment`));
    expect(lines).toHaveLength(3);
    expect(lines[0]).toContain('--probability 0.3333333333');
    expect(lines[1]).toContain('--probability 0.5000000000');
    expect(lines[2]).not.toContain('statistic');
    expect(rules('1.29')).toContain(`-A KUBE-SERVICES -d 10.96.0.20/32 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 -j ${svcChain}`);
    expect(rules('1.29')).toMatch(/-A KUBE-SEP-\w+ -p tcp -m comment --comment "default\/web:http" -m tcp -j DNAT --to-destination 10\.244\.2\.3:8080/);
  });

  it('puts the INVALID DROP in KUBE-FORWARD by version (absent in 1.14, since 1.29 only without be_liberal)', () => {
    const drop = '-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP';
    expect(rules('1.14')).not.toContain(drop);
    expect(rules('1.15')).toContain(drop);
    expect(rules('1.15', true)).toContain(drop);
    expect(rules('1.29')).toContain(drop);
    expect(rules('1.29', true)).not.toContain(drop);
  });

  it('rejects traffic to a service without endpoints in filter KUBE-SERVICES', () => {
    const empty = { ...svc, endpoints: [] };
    const text = kubeProxyRestore({ profile: KUBE_PROXY_PROFILES['1.29']!, services: [serviceObject(empty)], slices: [endpointSliceObject(empty, pods)], clusterCIDR: '10.244.0.0/16', beLiberal: false });
    expect(text).toContain('"default/web:http has no endpoints" -m tcp --dport 80 -j REJECT');
    expect(text).not.toContain('KUBE-SVC-');
  });
});
