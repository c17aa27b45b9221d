// The sysctls the lab sets in a node's namespace at boot: IP forwarding and br_netfilter's as a node's
// configuration has them, the scenario's own, then what kube-proxy ensures when it starts at boot (it runs after
// the node's settings were applied, so it has the last word).
import type { TopologySpec } from '../../model/scenario-schema.ts';
import { KUBE_PROXY_SYSCTLS } from '../../dataplane/kube-proxy-sysctls.ts';
import { bootOrder } from '../../dataplane/node-iptables.ts';

/**
 * A node's sysctls: set before its pods exist (`early`), except per-device ones, which wait for the devices the
 * node's wiring makes, eth0 and flannel.1 (`late`), or for its pods, whose CNI makes cni0 (`afterPods`); with
 * what kube-proxy ensures when it starts at boot (it starts after the node's own settings were applied).
 */
export function nodeSysctls(
  node: TopologySpec['nodes'][number],
  topology: TopologySpec,
): {
  early: Record<string, string | number>;
  late: Record<string, string | number>;
  afterPods: Record<string, string | number>;
} {
  const device = (key: string) => /^net\.ipv[46]\.(?:conf|neigh)\.(?!all\.|default\.)(.+)\.[^.]+$/.exec(key)?.[1];
  const wired = (key: string) => /^(lo|eth0|flannel\.1)$/.test(device(key)!);
  // a captured node has the values read from it (its `sysctls`) and br_netfilter as it was: nothing starts on it
  const kubeProxy = !node.captured && bootOrder(topology).includes('kube-proxy') ? KUBE_PROXY_SYSCTLS : {};
  const brNetfilter = node.captured && !node.captured.brNetfilter ? { 'net.bridge.bridge-nf-call-iptables': 0 } : {};
  const all = Object.entries({
    'net.ipv4.ip_forward': 1,
    'net.bridge.bridge-nf-call-iptables': 1,
    ...node.sysctls,
    ...kubeProxy,
    ...brNetfilter,
  });
  return {
    early: Object.fromEntries(all.filter(([k]) => device(k) === undefined)),
    late: Object.fromEntries(all.filter(([k]) => device(k) !== undefined && wired(k))),
    afterPods: Object.fromEntries(all.filter(([k]) => device(k) !== undefined && !wired(k))),
  };
}

/** sysctl's name for a key: a dot in a device's name is a slash to it (net.ipv4.conf.flannel/1.rp_filter). */
export function sysctlName(key: string): string {
  return key.replace(/^(net\.ipv[46]\.(?:conf|neigh)\.)(.+)\.([^.]+)$/, (_, at: string, dev: string, leaf: string) =>
    dev === 'all' || dev === 'default' ? key : `${at}${dev.replaceAll('.', '/')}.${leaf}`,
  );
}
