// The node components that own iptables rules, and what each one does to iptables when it starts:
// - kube-proxy ensures its jumps (`iptables -C`, insert at the top only when missing; upstream
//   pkg/util/iptables EnsureRule), so a restart with its jumps in place moves nothing. Releases up to
//   1.14 first ran the IPVS clean-up, which deleted the shared "kubernetes forwarding rules" jump.
// - the Cilium agent removes its feeder jumps and inserts them again at the top.
// - flanneld appends its jumps when missing.
// Only a node whose rules are gone (a reboot, a flush) lets the start order decide who is first in
// FORWARD: the kube-proxy/Cilium race of the cilium-kube-proxy-forward-race incident.
import type { KubeProxyLayout } from './kube-proxy-layout.ts';
import { kubeletRules, restorePayload, type KubeProxyRules } from './kube-proxy-rules.ts';
import type { IptablesOp } from './iptables-ops.ts';
import { ciliumRestore, type CiliumVersion } from './cilium-forward-rules.ts';

export const NODE_COMPONENTS = ['kube-proxy', 'cilium', 'flannel'] as const;
export type NodeComponent = (typeof NODE_COMPONENTS)[number];

/** The jumps the IPVS proxier's clean-up deleted: the same rule text as the iptables mode's, so it hit those. */
const IPVS_CLEANUP_JUMPS: IptablesOp[] = [
  {
    op: 'delete',
    table: 'nat',
    chain: 'OUTPUT',
    spec: '-m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
  },
  {
    op: 'delete',
    table: 'nat',
    chain: 'PREROUTING',
    spec: '-m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
  },
  {
    op: 'delete',
    table: 'nat',
    chain: 'POSTROUTING',
    spec: '-m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING',
  },
  {
    op: 'delete',
    table: 'filter',
    chain: 'FORWARD',
    spec: '-m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD',
  },
];

/** kube-proxy's start: (IPVS clean-up,) its chains in one restore, then each jump ensured. */
export function kubeProxyStart(layout: KubeProxyLayout, rules: KubeProxyRules): IptablesOp[] {
  const kubelet = kubeletRules(layout);
  return [
    ...(layout.ipvsCleanupAtStart ? IPVS_CLEANUP_JUMPS : []),
    // kubelet's chains (< 1.25) are there before kube-proxy syncs; written here so the lab has them
    ...(kubelet
      ? [
          { op: 'restore' as const, payload: restorePayload(kubelet) },
          ...kubelet.jumps.map((j) => ({ op: 'ensure-first' as const, ...j })),
        ]
      : []),
    { op: 'restore', payload: restorePayload(rules) },
    ...rules.jumps.map((j) => ({ op: 'ensure-first' as const, ...j })),
  ];
}

/** Cilium's start: old feeders out, its chains (by version: cilium-forward-rules.ts) rewritten, its FORWARD feeder inserted at the top. */
export function ciliumStart(version: CiliumVersion = '1.8', endpointRoutes = false): IptablesOp[] {
  return [
    { op: 'delete-jumps', prefix: 'CILIUM_' },
    { op: 'restore', payload: ciliumRestore(version, endpointRoutes) },
  ];
}

/** flanneld's masquerade and forward rules (vxlan backend, ipMasq on), its jumps appended when missing. */
export function flannelStart(podCIDR: string, clusterCIDR: string): IptablesOp[] {
  const masq = '-m comment --comment "flanneld masq"';
  const fwd = '-m comment --comment "flanneld forward"';
  return [
    {
      op: 'restore',
      payload: [
        '*nat',
        ':FLANNEL-POSTRTG - [0:0]',
        `-A FLANNEL-POSTRTG -m mark --mark 0x4000/0x4000 ${masq} -j RETURN`,
        `-A FLANNEL-POSTRTG -s ${podCIDR} -d ${clusterCIDR} ${masq} -j RETURN`,
        `-A FLANNEL-POSTRTG -s ${clusterCIDR} -d ${podCIDR} ${masq} -j RETURN`,
        `-A FLANNEL-POSTRTG ! -s ${clusterCIDR} -d ${podCIDR} ${masq} -j RETURN`,
        `-A FLANNEL-POSTRTG -s ${clusterCIDR} ! -d 224.0.0.0/4 ${masq} -j MASQUERADE --random-fully`,
        `-A FLANNEL-POSTRTG ! -s ${clusterCIDR} -d ${clusterCIDR} ${masq} -j MASQUERADE --random-fully`,
        'COMMIT',
        '*filter',
        ':FLANNEL-FWD - [0:0]',
        `-A FLANNEL-FWD -s ${clusterCIDR} ${fwd} -j ACCEPT`,
        `-A FLANNEL-FWD -d ${clusterCIDR} ${fwd} -j ACCEPT`,
        'COMMIT',
        '',
      ].join('\n'),
    },
    { op: 'ensure-last', table: 'nat', chain: 'POSTROUTING', spec: `${masq} -j FLANNEL-POSTRTG` },
    { op: 'ensure-last', table: 'filter', chain: 'FORWARD', spec: `${fwd} -j FLANNEL-FWD` },
  ];
}
