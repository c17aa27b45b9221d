// What the netns lab installs on one node, computed without running anything: the iptables-save
// text after the node's boot (its components in start order), the routes, neighbour and FDB
// entries the lab adds. Addresses are the ones the lab hands out (host-local in pod order, nodes on
// the fabric by index). Users diff the iptables part against `iptables-save` from their own nodes.
import type { TopologySpec } from '../model/scenario-schema.ts';
import type { PodPlacement } from '../contract/kube-objects.ts';
import { flannelDevice, flannelPeerEntries, vtepMac, type FlannelNode } from './flannel-entries.ts';
import { IptablesModel } from './iptables-ops.ts';
import { bootOps, bootOrder } from './node-iptables.ts';
import { defaultGateway, FABRIC_NET, nodeAddress } from './node-network.ts';
import { DEFAULT_CNI_CHAIN } from '../model/primitives.ts';
import { hostIPAddress } from './port-mappings.ts';
import { iptablesRestoreInput } from './captured-restore.ts';

export interface RenderOptions {
  /** Render as on a node where kube-proxy could create its nfacct counters (the lab cannot). */
  nfacct?: boolean;
}

/** The addresses the lab will hand out: a pod's own `ip`, else host-local's .2, .3, ... in pod order on each node. */
export function predictedPlacements(topology: TopologySpec): Map<string, PodPlacement> {
  const out = new Map<string, PodPlacement>();
  for (const node of topology.nodes) {
    const [base = '', len = '24'] = node.podCIDR.split('/');
    const start = base.split('.').reduce((a, o) => a * 256 + Number(o), 0) & (0xffffffff << (32 - Number(len)));
    topology.pods
      .filter((p) => p.node === node.name)
      .forEach((p, i) => {
        const n = (start >>> 0) + 2 + i;
        out.set(p.name, { ip: p.ip ?? [24, 16, 8, 0].map((s) => (n >>> s) & 0xff).join('.'), node: node.name });
      });
  }
  return out;
}

export function renderIptables(topology: TopologySpec, nodeName: string, options: RenderOptions = {}): string {
  const node = topology.nodes.find((n) => n.name === nodeName)!;
  // a captured node gets its captured tables back, as the lab restores them
  if (node.captured) {
    // a state directory is read in when the file loads (captured-files.ts)
    const { flushed, kept } = iptablesRestoreInput(node.captured.iptables ?? '');
    return flushed + kept;
  }
  const facts = {
    placements: predictedPlacements(topology),
    beLiberal: Number(node.sysctls?.['net.netfilter.nf_conntrack_tcp_be_liberal'] ?? 0) === 1,
    nfacctCounters: options.nfacct ?? false,
  };
  return new IptablesModel().apply(bootOps(topology, nodeName, facts)).save();
}

export function renderNode(topology: TopologySpec, nodeName: string, options: RenderOptions = {}): string {
  const nodeIndex = topology.nodes.findIndex((n) => n.name === nodeName);
  const node = topology.nodes[nodeIndex]!;
  const nodeIP = (i: number) => nodeAddress(topology.nodes, topology.nodes[i]!.name)!;
  const out = [
    node.captured
      ? `# node ${nodeName} (${nodeIP(nodeIndex)}), CNI ${topology.cni}; its captured state (netrepro import), restored verbatim`
      : `# node ${nodeName} (${nodeIP(nodeIndex)}), CNI ${topology.cni}, kube-proxy ${topology.kubeProxy}; boot order: ${bootOrder(topology).join(', ')}`,
    '# iptables-save',
    renderIptables(topology, nodeName, options).trimEnd(),
  ];
  const placements = predictedPlacements(topology);
  const pods = topology.pods.filter((p) => p.node === nodeName).map((p) => `${p.name} ${placements.get(p.name)!.ip}`);
  out.push('# pods', ...(pods.length ? pods : ['(none)']));
  const hostIP = (ref: string) => `${FABRIC_NET}.${100 + topology.hosts.findIndex((h) => `host/${h.name}` === ref)}`;
  const gateway = defaultGateway(node.defaultRoute, hostIP);
  const defaultRoute = gateway ? [`route add default via ${gateway} dev eth0`] : [];
  if (topology.cni === 'flannel') {
    const all: FlannelNode[] = topology.nodes.map((n, i) => ({
      name: n.name,
      podCIDR: n.podCIDR,
      nodeIP: nodeIP(i),
      vtepMac: vtepMac(i + 1),
    }));
    const me = all[nodeIndex]!;
    const peers = flannelPeerEntries(me, all);
    out.push(
      '# ip -batch (default route, flannel.1, routes, neighbours)',
      ...defaultRoute,
      ...flannelDevice(me),
      ...peers.ip,
      '# bridge -batch (FDB)',
      ...peers.bridge,
    );
  } else if (topology.cni === 'bridge') {
    out.push(
      '# ip -batch (default route, routes between nodes)',
      ...defaultRoute,
      ...topology.nodes
        .map((o, i) => (o.name === nodeName ? '' : `route add ${o.podCIDR} via ${nodeIP(i)} dev eth0`))
        .filter(Boolean),
    );
  } else {
    out.push(
      '# ip -batch (default route)',
      ...defaultRoute,
      `# cilium: pods on lxc veths, ${node.podCIDR} via cilium_host; BPF maps (masquerade${topology.cilium.socketLB ? ', socket LB' : ''}) are not rendered`,
    );
  }
  if (topology.cni !== 'cilium') {
    const chain = node.cniChain ?? DEFAULT_CNI_CHAIN;
    const nodeRefIP = (ref: string) => nodeIP(topology.nodes.findIndex((n) => `node/${n.name}` === ref));
    // portmap writes these when the pod starts (its own chains in nat), so they are not in the iptables-save above
    const mappings = topology.pods
      .filter((p) => p.node === nodeName)
      .flatMap((p) =>
        (p.hostPorts ?? []).map(
          (h) =>
            `${h.hostIP === undefined ? '' : `${hostIPAddress(h.hostIP, nodeRefIP)}:`}${h.hostPort}/${h.protocol} -> ${p.name} ${placements.get(p.name)!.ip}:${h.containerPort}`,
        ),
      );
    out.push(
      `# CNI chain: ${chain.join(', ')}`,
      ...(mappings.length === 0
        ? []
        : chain.includes('portmap')
          ? ['# hostPorts (portmap, CNI-HOSTPORT-DNAT)', ...mappings]
          : ['# hostPorts not written (no portmap in the chain)', ...mappings]),
    );
  }
  return `${out.join('\n')}\n`;
}
