// Writes the iptables rules kube-proxy's iptables mode writes, from Service and EndpointSlice
// objects, as one iptables-restore payload. Chain names are derived the way kube-proxy derives them
// (base32 of a sha256 over the service port name), so evidence reads like a real node's.
import { createHash } from 'node:crypto';
import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';

/** How a kube-proxy version behaves where our incidents care. */
export interface KubeProxyProfile {
  version: string;
  /** `-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP`: absent before 1.15 (PR 74840); since 1.29 omitted when be_liberal=1 (PR 120412). */
  invalidDrop: 'never' | 'always' | 'unless-be-liberal';
  /** KUBE-PROXY-FIREWALL in FORWARD (1.25+). */
  firewallChain: boolean;
}

export const KUBE_PROXY_PROFILES: Record<string, KubeProxyProfile> = {
  '1.14': { version: '1.14', invalidDrop: 'never', firewallChain: false },
  '1.15': { version: '1.15', invalidDrop: 'always', firewallChain: false },
  '1.29': { version: '1.29', invalidDrop: 'unless-be-liberal', firewallChain: true },
};

export interface RuleInput {
  profile: KubeProxyProfile;
  services: readonly V1Service[];
  slices: readonly V1EndpointSlice[];
  clusterCIDR: string;
  /** net.netfilter.nf_conntrack_tcp_be_liberal as kube-proxy read it at start. */
  beLiberal: boolean;
}

export const MASQ_MARK = '0x4000';

export function kubeProxyRestore(input: RuleInput): string {
  const nat: string[] = [];
  const natChains = ['KUBE-SERVICES', 'KUBE-POSTROUTING', 'KUBE-MARK-MASQ', 'KUBE-NODEPORTS'];
  const filterServices: string[] = [];

  for (const svc of input.services) {
    const ns = svc.metadata?.namespace ?? 'default';
    const name = svc.metadata?.name ?? '';
    const vip = svc.spec?.clusterIP ?? '';
    const slice = input.slices.find((s) => s.metadata?.labels?.['kubernetes.io/service-name'] === name && (s.metadata?.namespace ?? 'default') === ns);
    for (const port of svc.spec?.ports ?? []) {
      const proto = (port.protocol ?? 'TCP').toLowerCase();
      const portName = port.name ? `${ns}/${name}:${port.name}` : `${ns}/${name}`;
      const targetPort = slice?.ports?.find((p) => (p.name ?? '') === (port.name ?? ''))?.port ?? Number(port.targetPort);
      const endpoints = (slice?.endpoints ?? []).filter((e) => e.conditions?.ready !== false).flatMap((e) => e.addresses);
      const match = `-d ${vip}/32 -p ${proto} -m comment --comment "${portName} cluster IP" -m ${proto} --dport ${port.port}`;
      if (endpoints.length === 0) {
        filterServices.push(`-A KUBE-SERVICES -d ${vip}/32 -p ${proto} -m comment --comment "${portName} has no endpoints" -m ${proto} --dport ${port.port} -j REJECT --reject-with icmp-port-unreachable`);
        continue;
      }
      const svcChain = chainName('KUBE-SVC-', `${portName}${proto}`);
      natChains.push(svcChain);
      nat.push(`-A KUBE-SERVICES ${match} -j ${svcChain}`);
      nat.push(`-A ${svcChain} ! -s ${input.clusterCIDR} ${match} -j KUBE-MARK-MASQ`);
      endpoints.forEach((ip, i) => {
        const endpoint = `${ip}:${targetPort}`;
        const sepChain = chainName('KUBE-SEP-', `${portName}${proto}${endpoint}`);
        natChains.push(sepChain);
        const left = endpoints.length - i;
        const pick = left > 1 ? ` -m statistic --mode random --probability ${(1 / left).toFixed(10)}` : '';
        nat.push(`-A ${svcChain} -m comment --comment "${portName} -> ${endpoint}"${pick} -j ${sepChain}`);
        nat.push(`-A ${sepChain} -s ${ip}/32 -m comment --comment "${portName}" -j KUBE-MARK-MASQ`);
        nat.push(`-A ${sepChain} -p ${proto} -m comment --comment "${portName}" -m ${proto} -j DNAT --to-destination ${endpoint}`);
      });
    }
  }

  const dropInvalid =
    input.profile.invalidDrop === 'always' || (input.profile.invalidDrop === 'unless-be-liberal' && !input.beLiberal);
  const forwardJumps = kubeProxyForwardJumps(input.profile);
  return [
    '*nat',
    ...natChains.map((c) => `:${c} - [0:0]`),
    '-I POSTROUTING 1 -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING',
    '-I OUTPUT 1 -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-I PREROUTING 1 -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    `-A KUBE-MARK-MASQ -j MARK --or-mark ${MASQ_MARK}`,
    `-A KUBE-POSTROUTING -m mark ! --mark ${MASQ_MARK}/${MASQ_MARK} -j RETURN`,
    `-A KUBE-POSTROUTING -j MARK --xor-mark ${MASQ_MARK}`,
    '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully',
    ...nat,
    '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS',
    'COMMIT',
    '*filter',
    ...['KUBE-FORWARD', 'KUBE-SERVICES', 'KUBE-EXTERNAL-SERVICES', 'KUBE-NODEPORTS', ...(input.profile.firewallChain ? ['KUBE-PROXY-FIREWALL'] : [])].map((c) => `:${c} - [0:0]`),
    ...forwardJumps.map((rule) => `-I FORWARD 1 ${rule}`).reverse(),
    '-I INPUT 1 -m comment --comment "kubernetes health check service ports" -j KUBE-NODEPORTS',
    ...filterServices,
    ...(dropInvalid ? ['-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP'] : []),
    `-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark ${MASQ_MARK}/${MASQ_MARK} -j ACCEPT`,
    '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
    'COMMIT',
    '',
  ].join('\n');
}

/** kube-proxy's jumps from FORWARD, top-down as they end up there (it prepends each one). */
export function kubeProxyForwardJumps(profile: KubeProxyProfile): string[] {
  return [
    ...(profile.firewallChain ? ['-m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL'] : []),
    '-m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD',
    '-m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-m conntrack --ctstate NEW -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES',
  ];
}

/** kube-proxy's servicePortChainName / servicePortEndpointChainName: prefix + base32(sha256(s))[:16]. */
export function chainName(prefix: string, key: string): string {
  return prefix + base32(createHash('sha256').update(key).digest()).slice(0, 16);
}

function base32(bytes: Uint8Array): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  let out = '';
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  return out;
}
