// The filter rules the Cilium agent installs in CILIUM_FORWARD, by Cilium version, in the order
// its iptables manager appends them (pkg/datapath/iptables/iptables.go, installForwardChainRules).
// The jump from FORWARD is prepended on every agent start: that is the start-order race of the cilium-kube-proxy-forward-race incident.
import { HarnessError } from '../model/errors.ts';
import { CILIUM_VERSIONS } from '../model/scenario-schema.ts';

/** Rule layouts we reproduce; test/unit/cilium-upstream.test.ts records where each was read. */
export type CiliumVersion = (typeof CILIUM_VERSIONS)[number];

const HOST = 'cilium_host';
const accept = (dir: '-i' | '-o', dev: string, comment: string) =>
  `-A CILIUM_FORWARD ${dir} ${dev} -m comment --comment "cilium: ${comment}" -j ACCEPT`;

/**
 * - "1.7" (Cilium v1.6.2 - v1.7.4): three rules on the delivery interface only (cilium_host, or lxc+
 *   with enable-endpoint-routes), so with endpoint routes nothing matches traffic via cilium_host.
 * - "1.8" (cilium/cilium PR 11819: v1.8.0, backported to v1.7.5; unchanged through v1.19): the
 *   cilium_host rules always, cilium_net for proxy return traffic, and with endpoint routes two more
 *   on lxc+ (`-o lxc+` among them).
 */
export function ciliumForwardRules(version: CiliumVersion, endpointRoutes: boolean): string[] {
  const delivery = endpointRoutes ? 'lxc+' : HOST;
  if (version === '1.7') {
    return [
      accept('-o', delivery, `any->cluster on ${delivery} forward accept`),
      accept('-i', delivery, `cluster->any on ${delivery} forward accept (nodeport)`),
      accept('-i', 'lxc+', 'cluster->any on lxc+ forward accept'),
    ];
  }
  if (version !== '1.8')
    throw new HarnessError(
      'SCENARIO_INVALID',
      `no CILIUM_FORWARD layout for Cilium ${String(version)}`,
      `known: ${CILIUM_VERSIONS.join(', ')}`,
    );
  return [
    accept('-o', HOST, `any->cluster on ${HOST} forward accept`),
    accept('-i', HOST, `cluster->any on ${HOST} forward accept (nodeport)`),
    accept('-i', 'lxc+', 'cluster->any on lxc+ forward accept'),
    accept('-i', 'cilium_net', 'cluster->any on cilium_net forward accept (nodeport)'),
    ...(endpointRoutes
      ? [
          accept('-o', delivery, `any->cluster on ${delivery} forward accept`),
          accept('-i', delivery, `cluster->any on ${delivery} forward accept (nodeport)`),
        ]
      : []),
  ];
}

/** An iptables-restore payload: the chain, its rules, and the feeder jump prepended to FORWARD. */
export function ciliumRestore(version: CiliumVersion, endpointRoutes: boolean): string {
  return [
    '*filter',
    ':CILIUM_FORWARD - [0:0]',
    ...ciliumForwardRules(version, endpointRoutes),
    '-I FORWARD 1 -m comment --comment "cilium-feeder: CILIUM_FORWARD" -j CILIUM_FORWARD',
    'COMMIT',
    '',
  ].join('\n');
}
