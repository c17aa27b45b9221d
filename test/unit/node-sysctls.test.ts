// What the lab sets in a node's namespace at boot: its configuration's sysctls, the scenario's, and what
// kube-proxy ensures when it starts there (route_localnet on all), which has the last word.
import { describe, expect, it } from 'vitest';
import { Topology } from '../../src/model/scenario-schema.ts';
import { nodeSysctls, sysctlName } from '../../src/providers/netns/node-sysctls.ts';

const topology = (extra: Record<string, unknown>, sysctls?: Record<string, number>) =>
  Topology.parse({
    cni: 'cilium',
    nodes: [{ name: 'a', podCIDR: '10.244.1.0/24', ...(sysctls ? { sysctls } : {}) }],
    pods: [{ name: 'web', node: 'a' }],
    ...extra,
  });
const of = (t: ReturnType<typeof topology>) => nodeSysctls(t.nodes[0]!, t);

describe("a node's sysctls at boot", () => {
  it('include route_localnet on all when kube-proxy starts at boot, over what the scenario sets', () => {
    expect(of(topology({})).early).toMatchObject({ 'net.ipv4.conf.all.route_localnet': 1 });
    const hardened = of(topology({}, { 'net.ipv4.conf.all.route_localnet': 0 }));
    expect(hardened.early['net.ipv4.conf.all.route_localnet']).toBe(1);
  });

  it('leave it as the node has it when kube-proxy is not in the boot order', () => {
    const withoutProxy = of(topology({ startOrder: ['cilium'] }));
    expect(withoutProxy.early).not.toHaveProperty('net.ipv4.conf.all.route_localnet');
    expect(withoutProxy.early).toMatchObject({ 'net.ipv4.ip_forward': 1 });
  });

  it("set a device's own once the device exists", () => {
    const perDevice = of(topology({}, { 'net.ipv4.conf.eth0.rp_filter': 1 }));
    expect(perDevice.late).toEqual({ 'net.ipv4.conf.eth0.rp_filter': 1 });
    expect(perDevice.early).not.toHaveProperty('net.ipv4.conf.eth0.rp_filter');
  });

  it("set a device the node's pods bring (cni0) once the pods exist, the wiring's own (eth0, flannel.1) before", () => {
    const both = of(
      topology(
        {},
        { 'net.ipv4.conf.cni0.rp_filter': 0, 'net.ipv4.conf.flannel.1.forwarding': 1, 'net.ipv4.conf.lo.rp_filter': 0 },
      ),
    );
    expect(both.afterPods).toEqual({ 'net.ipv4.conf.cni0.rp_filter': 0 });
    expect(both.late).toEqual({ 'net.ipv4.conf.flannel.1.forwarding': 1, 'net.ipv4.conf.lo.rp_filter': 0 });
  });

  it('name a device with a dot in it as sysctl does, with a slash (flannel.1)', () => {
    expect(sysctlName('net.ipv4.conf.flannel.1.rp_filter')).toBe('net.ipv4.conf.flannel/1.rp_filter');
    expect(sysctlName('net.ipv4.conf.eth0.rp_filter')).toBe('net.ipv4.conf.eth0.rp_filter');
    expect(sysctlName('net.ipv4.conf.all.rp_filter')).toBe('net.ipv4.conf.all.rp_filter');
    expect(sysctlName('net.ipv4.neigh.cni0.retrans_time_ms')).toBe('net.ipv4.neigh.cni0.retrans_time_ms');
    expect(sysctlName('net.ipv4.ip_forward')).toBe('net.ipv4.ip_forward');
  });
});
