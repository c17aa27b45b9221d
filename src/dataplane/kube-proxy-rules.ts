// Writes the iptables rules kube-proxy's iptables mode writes, from Service and EndpointSlice
// objects, for one node and one version (kube-proxy-layout.ts). Rules are written in the form
// `iptables-save` prints them (argument order, /32 suffixes, --set-xmark), so a render of the lab
// diffs cleanly against a real node. Chain names are derived the way kube-proxy derives them
// (base32 of a sha256 over the service port name), so evidence reads like a real node's.
import { createHash } from 'node:crypto';
import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import { DEFAULT_AFFINITY_SECONDS } from '../contract/kube-objects.ts';
import { type KubeProxyLayout, proxies } from './kube-proxy-layout.ts';
import { cidrContains } from '../model/scenario-references.ts';

export interface RuleInput {
  layout: KubeProxyLayout;
  services: readonly V1Service[];
  slices: readonly V1EndpointSlice[];
  /** kube-proxy's clusterCIDR: '' when it has none (no masquerade for off-cluster traffic to a ClusterIP). */
  clusterCIDR: string;
  /** masqueradeAll: every packet to a ClusterIP is marked for SNAT, from pods too. */
  masqueradeAll: boolean;
  /** The node kube-proxy runs on: endpoints on it are "local". */
  nodeName: string;
  /** Its address (kube-proxy's nodeIP): a source range holding it lets the node reach the load balancer address. */
  nodeIP?: string;
  /** net.netfilter.nf_conntrack_tcp_be_liberal as kube-proxy read it at start. */
  beLiberal: boolean;
  /** Whether kube-proxy could create its nfacct counters (needs nfnetlink_acct); without them it writes the rules without `-m nfacct`. */
  nfacctCounters: boolean;
}

export type TableName = 'filter' | 'nat';

/** One table's part of a restore: chains kube-proxy flushes and refills, and their rules (`-A CHAIN ...`). */
export interface TableRules {
  chains: string[];
  rules: string[];
}

/** A jump from a built-in chain, ensured at start: `iptables -C`, and `-I CHAIN 1` only when missing. */
export interface Jump {
  table: TableName;
  chain: string;
  /** Everything after `-A CHAIN `, in save form. */
  spec: string;
}

export interface KubeProxyRules {
  tables: Record<TableName, TableRules>;
  /** In the order kube-proxy ensures them; each one missing is prepended, so the last one ends up first. */
  jumps: Jump[];
}

export const MASQ_MARK = '0x4000';
const MARK = `${MASQ_MARK}/${MASQ_MARK}`;
const SET_MASQ_MARK = `MARK --set-xmark ${MARK}`;
const NFACCT_INVALID = 'ct_state_invalid_dropped_pkts';
const NFACCT_LOCALHOST_NODEPORT = 'localhost_nps_accepted_pkts';

interface Endpoint {
  ip: string;
  port: number;
  local: boolean;
  ready: boolean;
  serving: boolean;
  terminating: boolean;
}

const q = (comment: string) => `-m comment --comment "${comment}"`;

export function kubeProxyRules(input: RuleInput): KubeProxyRules {
  const L = input.layout;
  const filter: TableRules = { chains: ['KUBE-EXTERNAL-SERVICES', 'KUBE-FORWARD', 'KUBE-SERVICES'], rules: [] };
  const nat: TableRules = {
    chains: ['KUBE-MARK-MASQ', 'KUBE-NODEPORTS', 'KUBE-POSTROUTING', 'KUBE-SERVICES'],
    rules: [],
  };
  if (L.inputToNodePorts) filter.chains.push('KUBE-NODEPORTS');
  if (L.proxyFirewall) filter.chains.push('KUBE-PROXY-FIREWALL');
  if (L.localnetFirewall) filter.chains.push('KUBE-FIREWALL');

  if (L.postrouting === 'mark-masquerade') {
    nat.rules.push(
      `-A KUBE-POSTROUTING ${q('kubernetes service traffic requiring SNAT')} -m mark --mark ${MARK} -j MASQUERADE${L.randomFully ? ' --random-fully' : ''}`,
    );
  } else {
    nat.rules.push(
      `-A KUBE-POSTROUTING -m mark ! --mark ${MARK} -j RETURN`,
      `-A KUBE-POSTROUTING -j MARK --set-xmark ${MASQ_MARK}/0x0`,
      `-A KUBE-POSTROUTING ${q('kubernetes service traffic requiring SNAT')} -j MASQUERADE${L.randomFully ? ' --random-fully' : ''}`,
    );
  }
  nat.rules.push(`-A KUBE-MARK-MASQ -j ${SET_MASQ_MARK}`);
  if (L.localnetFirewall) {
    filter.rules.push(
      `-A KUBE-FIREWALL ! -s 127.0.0.0/8 -d 127.0.0.0/8 ${q('block incoming localnet connections')} -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP`,
    );
  }

  // kube-proxy walks a Go map of service ports; iptables-save groups rules by chain, so only the order inside each chain matters
  // a headless Service has no ClusterIP to write rules for (ShouldSkipService)
  const handled = input.services.filter((s) => s.spec?.clusterIP !== 'None' && proxies(L, s.metadata?.labels));
  for (const svc of handled) {
    for (const port of svc.spec?.ports ?? []) servicePortRules(input, svc, port, filter, nat);
  }

  nat.rules.push(
    `-A KUBE-SERVICES ${q('kubernetes service nodeports; NOTE: this must be the last rule in this chain')} -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS`,
  );

  const drop =
    L.invalidDrop === 'always' || (L.invalidDrop === 'unless-be-liberal' && !input.beLiberal)
      ? [
          `-A KUBE-FORWARD -m conntrack --ctstate INVALID${L.nfacct && input.nfacctCounters ? ` -m nfacct --nfacct-name ${NFACCT_INVALID}` : ''} -j DROP`,
        ]
      : [];
  filter.rules.push(...drop, `-A KUBE-FORWARD ${q('kubernetes forwarding rules')} -m mark --mark ${MARK} -j ACCEPT`);
  if (L.forwardConntrack === 'single') {
    filter.rules.push(
      `-A KUBE-FORWARD ${q('kubernetes forwarding conntrack rule')} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`,
    );
  } else if (L.forwardConntrack === 'pair' || input.clusterCIDR) {
    // before 1.18 the pair matches the cluster CIDR, and without one it is not written
    const [src, dst] =
      L.forwardConntrack === 'cluster-cidr-pair' ? [`-s ${input.clusterCIDR} `, `-d ${input.clusterCIDR} `] : ['', ''];
    filter.rules.push(
      `-A KUBE-FORWARD ${src}${q('kubernetes forwarding conntrack pod source rule')} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`,
      `-A KUBE-FORWARD ${dst}${q('kubernetes forwarding conntrack pod destination rule')} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`,
    );
  }
  return { tables: { filter, nat }, jumps: kubeProxyJumps(L) };
}

type ServicePort = NonNullable<NonNullable<V1Service['spec']>['ports']>[number];

/** What every rule of one Service port is written from: its names, chains, matches and endpoints by policy. */
function portContext(input: RuleInput, svc: V1Service, port: ServicePort) {
  const L = input.layout;
  const ns = svc.metadata?.namespace ?? 'default';
  const name = svc.metadata?.name ?? '';
  const vip = svc.spec?.clusterIP ?? '';
  const proto = (port.protocol ?? 'TCP').toLowerCase();
  const portName = port.name ? `${ns}/${name}:${port.name}` : `${ns}/${name}`;
  const nodePort = svc.spec?.type === 'NodePort' || svc.spec?.type === 'LoadBalancer' ? (port.nodePort ?? 0) : 0;
  const etpLocal = nodePort !== 0 && svc.spec?.externalTrafficPolicy === 'Local';
  const itpLocal = L.internalTrafficPolicy && svc.spec?.internalTrafficPolicy === 'Local';

  const all = sliceEndpoints(input, svc, port);
  const ready = all.filter((e) => e.ready);
  const fallback = (set: Endpoint[]) =>
    set.filter((e) => e.ready).length > 0
      ? set.filter((e) => e.ready)
      : L.terminatingFallback
        ? set.filter((e) => e.serving && e.terminating)
        : [];
  const clusterEps = L.terminatingFallback ? fallback(all) : ready;
  const localEps = L.terminatingFallback ? fallback(all.filter((e) => e.local)) : ready.filter((e) => e.local);
  const svcChain = chainName('KUBE-SVC-', `${portName}${proto}`);
  const vipMatch = `-d ${vip}/32 -p ${proto} ${q(`${portName} cluster IP`)} -m ${proto} --dport ${port.port}`;
  // masqueradeAll marks every packet; else, with a cluster CIDR, the ones not from a pod (its local-traffic detector)
  const masq = input.masqueradeAll
    ? `${vipMatch} -j KUBE-MARK-MASQ`
    : input.clusterCIDR
      ? `! -s ${input.clusterCIDR} ${vipMatch} -j KUBE-MARK-MASQ`
      : undefined;
  const sep = (e: Endpoint) => chainName('KUBE-SEP-', `${portName}${proto}${e.ip}:${e.port}`);
  const affinity = clientIPAffinity(svc);
  // what kube-proxy reads of a LoadBalancer: the addresses its status publishes, and the source ranges
  const lbIPs =
    svc.spec?.type === 'LoadBalancer' ? (svc.status?.loadBalancer?.ingress ?? []).flatMap((i) => i.ip ?? []) : [];
  const sourceRanges = svc.spec?.loadBalancerSourceRanges ?? [];
  const healthCheckNodePort = etpLocal && svc.spec?.type === 'LoadBalancer' ? (svc.spec.healthCheckNodePort ?? 0) : 0;
  return {
    input,
    L,
    port,
    vip,
    proto,
    portName,
    nodePort,
    etpLocal,
    itpLocal,
    clusterEps,
    localEps,
    svcChain,
    vipMatch,
    masq,
    sep,
    affinity,
    lbIPs,
    sourceRanges,
    healthCheckNodePort,
  };
}
type PortContext = ReturnType<typeof portContext>;

/** One Service port's rules, in the shape of the layout's release. */
function servicePortRules(
  input: RuleInput,
  svc: V1Service,
  port: ServicePort,
  filter: TableRules,
  nat: TableRules,
): void {
  const c = portContext(input, svc, port);
  if (c.clusterEps.length === 0) noEndpointRules(c, filter);
  else if (c.L.externalChains === 'xlb') xlbRules(c, filter, nat);
  else splitChainRules(c, filter, nat);
  // the health check's port is let in whether or not the node has endpoints (filter INPUT -> KUBE-NODEPORTS)
  if (c.healthCheckNodePort && c.L.inputToNodePorts)
    filter.rules.push(
      `-A KUBE-NODEPORTS -p tcp ${q(`${c.portName} health check node port`)} -m tcp --dport ${c.healthCheckNodePort} -j ACCEPT`,
    );
}

/** No usable endpoint: the ClusterIP (and the node port) REJECTed in the filter table. */
function noEndpointRules({ vip, proto, portName, port, nodePort, lbIPs }: PortContext, filter: TableRules): void {
  filter.rules.push(
    `-A KUBE-SERVICES -d ${vip}/32 -p ${proto} ${q(`${portName} has no endpoints`)} -m ${proto} --dport ${port.port} -j REJECT --reject-with icmp-port-unreachable`,
  );
  for (const ip of lbIPs)
    filter.rules.push(externalFilter(ip, proto, portName, port.port, 'has no endpoints', 'REJECT'));
  if (nodePort)
    filter.rules.push(
      `-A KUBE-EXTERNAL-SERVICES -p ${proto} ${q(`${portName} has no endpoints`)} -m addrtype --dst-type LOCAL -m ${proto} --dport ${nodePort} -j REJECT --reject-with icmp-port-unreachable`,
    );
}

/** A KUBE-EXTERNAL-SERVICES rule for a load balancer address: REJECT without endpoints, DROP without local ones (1.24). */
function externalFilter(
  ip: string,
  proto: string,
  portName: string,
  port: number,
  why: string,
  target: 'REJECT' | 'DROP',
) {
  const reject = target === 'REJECT' ? ' --reject-with icmp-port-unreachable' : '';
  return `-A KUBE-EXTERNAL-SERVICES -d ${ip}/32 -p ${proto} ${q(`${portName} ${why}`)} -m ${proto} --dport ${port} -j ${target}${reject}`;
}

/**
 * A LoadBalancer's addresses: KUBE-SERVICES sends them to its firewall chain KUBE-FW (every one before 1.24, only with
 * source ranges from then on, else straight to `external`). KUBE-FW lets each source range through to `external`,
 * the load balancer's own address too where a range holds the node's (the "allowFromNode" rule, for a node that
 * reaches the address locally), and drops the rest: KUBE-MARK-DROP before 1.25, a filter DROP from then on.
 */
function loadBalancerRules(
  { input, L, proto, portName, port, lbIPs, sourceRanges, etpLocal }: PortContext,
  filter: TableRules,
  nat: TableRules,
  external: string,
): void {
  const fw = chainName('KUBE-FW-', `${portName}${proto}`);
  const comment = q(`${portName} loadbalancer IP`);
  const usesFw = L.loadBalancerFirewall === 'fw-mark-drop' || sourceRanges.length > 0;
  const nodeInRange = input.nodeIP !== undefined && sourceRanges.some((r) => cidrContains(r, `${input.nodeIP}/32`));
  for (const ip of lbIPs) {
    nat.rules.push(
      `-A KUBE-SERVICES -d ${ip}/32 -p ${proto} ${comment} -m ${proto} --dport ${port.port} -j ${usesFw ? fw : external}`,
    );
    if (usesFw && L.loadBalancerFirewall === 'proxy-firewall')
      filter.rules.push(
        `-A KUBE-PROXY-FIREWALL -d ${ip}/32 -p ${proto} ${q(`${portName} traffic not accepted by ${fw}`)} -m ${proto} --dport ${port.port} -j DROP`,
      );
    if (!usesFw) continue;
    nat.chains.push(fw);
    // before KUBE-EXT, the firewall chain marks Cluster-policy traffic for SNAT itself
    if (L.loadBalancerFirewall === 'fw-mark-drop' && !etpLocal) nat.rules.push(`-A ${fw} ${comment} -j KUBE-MARK-MASQ`);
    if (sourceRanges.length === 0) nat.rules.push(`-A ${fw} ${comment} -j ${external}`);
    for (const range of sourceRanges) nat.rules.push(`-A ${fw} -s ${range} ${comment} -j ${external}`);
    if (nodeInRange) nat.rules.push(`-A ${fw} -s ${ip}/32 ${comment} -j ${external}`);
    nat.rules.push(
      L.loadBalancerFirewall === 'proxy-firewall'
        ? `-A ${fw} ${q(`other traffic to ${portName} will be dropped by KUBE-PROXY-FIREWALL`)}`
        : `-A ${fw} ${comment} -j KUBE-MARK-DROP`,
    );
  }
}

/** Before 1.24: one KUBE-SVC chain with every ready endpoint, and KUBE-XLB for Local external traffic. */
function xlbRules(c: PortContext, filter: TableRules, nat: TableRules): void {
  const {
    input,
    L,
    vip,
    proto,
    portName,
    port,
    nodePort,
    etpLocal,
    itpLocal,
    clusterEps,
    localEps,
    svcChain,
    vipMatch,
    masq,
    sep,
    affinity,
  } = c;
  const internal = itpLocal ? clusterEps.filter((e) => e.local) : clusterEps;
  if (itpLocal && internal.length === 0) {
    filter.rules.push(
      `-A KUBE-SERVICES -d ${vip}/32 -p ${proto} ${q(`${portName} has no local endpoints`)} -m ${proto} --dport ${port.port} -j DROP`,
    );
  } else {
    if (!L.masqueradeInServiceChain && masq) nat.rules.push(`-A KUBE-SERVICES ${masq}`);
    nat.rules.push(`-A KUBE-SERVICES ${vipMatch} -j ${svcChain}`);
  }
  nat.chains.push(svcChain);
  const xlb = chainName('KUBE-XLB-', `${portName}${proto}`);
  loadBalancerRules(c, filter, nat, etpLocal ? xlb : svcChain);
  if (nodePort) {
    const np = `-p ${proto} ${q(portName)} -m ${proto} --dport ${nodePort}`;
    if (!etpLocal)
      nat.rules.push(`-A KUBE-NODEPORTS ${np} -j KUBE-MARK-MASQ`, `-A KUBE-NODEPORTS ${np} -j ${svcChain}`);
    else
      nat.rules.push(`-A KUBE-NODEPORTS -s 127.0.0.0/8 ${np} -j KUBE-MARK-MASQ`, `-A KUBE-NODEPORTS ${np} -j ${xlb}`);
  }
  writeBalancing(input, nat, svcChain, portName, internal, sep, affinity);
  for (const e of clusterEps) writeEndpoint(input, nat, portName, proto, e, sep(e), affinity);
  if (etpLocal) {
    nat.chains.push(xlb);
    // written only where kube-proxy can tell a pod's packet (a cluster CIDR)
    const redirectPods = input.clusterCIDR
      ? [
          `-A ${xlb} -s ${input.clusterCIDR} ${q('Redirect pods trying to reach external loadbalancer VIP to clusterIP')} -j ${svcChain}`,
        ]
      : [];
    // the LOCAL-traffic rules came with PR 77523 (1.15), written before the redirect rule in 1.15 and after it from 1.16
    const localTraffic =
      L.minor >= 15
        ? [
            `-A ${xlb} ${q(`masquerade LOCAL traffic for ${portName} LB IP`)} -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ`,
            `-A ${xlb} ${q(`route LOCAL traffic for ${portName} LB IP to service chain`)} -m addrtype --src-type LOCAL -j ${svcChain}`,
          ]
        : [];
    nat.rules.push(...(L.xlbRedirectFirst ? [...redirectPods, ...localTraffic] : [...localTraffic, ...redirectPods]));
    if (localEps.length === 0) nat.rules.push(`-A ${xlb} ${q(`${portName} has no local endpoints`)} -j KUBE-MARK-DROP`);
    // KUBE-XLB always carries the service comment on its affinity rules, whatever the release does to KUBE-SVC's
    if (affinity !== undefined)
      for (const e of localEps)
        nat.rules.push(`-A ${xlb} ${q(portName)} ${recentCheck(sep(e), affinity)} -j ${sep(e)}`);
    localEps.forEach((e, i) => {
      const left = localEps.length - i;
      nat.rules.push(`-A ${xlb} ${q(`Balancing rule ${i} for ${portName}`)}${probability(left)} -j ${sep(e)}`);
    });
  }
}

/** From 1.24: KUBE-SVC (Cluster policy), KUBE-SVL (Local policy), KUBE-EXT (external destinations). */
function splitChainRules(c: PortContext, filter: TableRules, nat: TableRules): void {
  const {
    input,
    L,
    vip,
    proto,
    portName,
    port,
    nodePort,
    etpLocal,
    itpLocal,
    clusterEps,
    localEps,
    svcChain,
    vipMatch,
    masq,
    sep,
    affinity,
  } = c;
  const svl = chainName('KUBE-SVL-', `${portName}${proto}`);
  const ext = chainName('KUBE-EXT-', `${portName}${proto}`);
  const usesCluster = clusterEps.length > 0 && (!itpLocal || (nodePort !== 0 && !etpLocal));
  const usesLocal = localEps.length > 0 && (itpLocal || etpLocal);
  const internalChain = itpLocal ? svl : svcChain;
  const hasInternal = itpLocal ? localEps.length > 0 : true;
  const hasExternal = etpLocal ? localEps.length > 0 : true;

  if (hasInternal) nat.rules.push(`-A KUBE-SERVICES ${vipMatch} -j ${internalChain}`);
  else
    filter.rules.push(
      `-A KUBE-SERVICES -d ${vip}/32 -p ${proto} ${q(`${portName} has no local endpoints`)} -m ${proto} --dport ${port.port} -j DROP`,
    );
  loadBalancerRules(c, filter, nat, ext);
  if (!hasExternal)
    for (const ip of c.lbIPs)
      filter.rules.push(externalFilter(ip, proto, portName, port.port, 'has no local endpoints', 'DROP'));
  if (nodePort) {
    if (L.nfacct && input.nfacctCounters) {
      nat.rules.push(
        `-A KUBE-NODEPORTS -d 127.0.0.0/8 -p ${proto} ${q(portName)} -m ${proto} --dport ${nodePort} -m nfacct --nfacct-name ${NFACCT_LOCALHOST_NODEPORT} -j ${ext}`,
      );
    }
    nat.rules.push(`-A KUBE-NODEPORTS -p ${proto} ${q(portName)} -m ${proto} --dport ${nodePort} -j ${ext}`);
    if (!hasExternal) {
      filter.rules.push(
        `-A KUBE-EXTERNAL-SERVICES -p ${proto} ${q(`${portName} has no local endpoints`)} -m addrtype --dst-type LOCAL -m ${proto} --dport ${nodePort} -j DROP`,
      );
    }
  }
  if (hasInternal && masq) nat.rules.push(`-A ${internalChain} ${masq}`);
  if (nodePort) {
    nat.chains.push(ext);
    if (!etpLocal) {
      nat.rules.push(`-A ${ext} ${q(`masquerade traffic for ${portName} external destinations`)} -j KUBE-MARK-MASQ`);
    } else {
      if (input.clusterCIDR)
        nat.rules.push(
          `-A ${ext} -s ${input.clusterCIDR} ${q(`pod traffic for ${portName} external destinations`)} -j ${svcChain}`,
        );
      nat.rules.push(
        `-A ${ext} ${q(`masquerade LOCAL traffic for ${portName} external destinations`)} -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ`,
        `-A ${ext} ${q(`route LOCAL traffic for ${portName} external destinations`)} -m addrtype --src-type LOCAL -j ${svcChain}`,
      );
    }
    if (hasExternal) nat.rules.push(`-A ${ext} -j ${etpLocal ? svl : svcChain}`);
  }
  if (usesCluster) {
    nat.chains.push(svcChain);
    writeBalancing(input, nat, svcChain, portName, clusterEps, sep, affinity);
  }
  if (usesLocal) {
    nat.chains.push(svl);
    writeBalancing(input, nat, svl, portName, localEps, sep, affinity);
  }
  const reachable = [...(usesCluster ? clusterEps : []), ...(usesLocal ? localEps : [])].filter(
    (e, i, a) => a.findIndex((o) => o.ip === e.ip && o.port === e.port) === i,
  );
  for (const e of reachable) writeEndpoint(input, nat, portName, proto, e, sep(e), affinity);
}

/** sessionAffinity ClientIP: its timeout in seconds; undefined without affinity. */
function clientIPAffinity(svc: V1Service): number | undefined {
  if (svc.spec?.sessionAffinity !== 'ClientIP') return undefined;
  return svc.spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? DEFAULT_AFFINITY_SECONDS;
}

/** The `-m recent` match of an affinity jump, as iptables-save prints it (the kernel adds the mask and the source side). */
const recentCheck = (list: string, seconds: number) =>
  `-m recent --rcheck --seconds ${seconds} --reap --name ${list} --mask 255.255.255.255 --rsource`;

/** With affinity, a jump per endpoint to a client seen within the timeout comes before the balancing rules (writeServiceToEndpointRules). */
function writeBalancing(
  input: RuleInput,
  nat: TableRules,
  chain: string,
  portName: string,
  eps: Endpoint[],
  sep: (e: Endpoint) => string,
  affinity: number | undefined,
) {
  if (affinity !== undefined) {
    for (const e of eps)
      nat.rules.push(
        `-A ${chain}${endpointComment(input.layout, portName, e)} ${recentCheck(sep(e), affinity)} -j ${sep(e)}`,
      );
  }
  eps.forEach((e, i) => {
    nat.rules.push(
      `-A ${chain}${endpointComment(input.layout, portName, e)}${probability(eps.length - i)} -j ${sep(e)}`,
    );
  });
}

/** KUBE-SEP: hairpin masquerade, then DNAT; with affinity the DNAT rule records the client in the endpoint's list (`--set`). */
function writeEndpoint(
  input: RuleInput,
  nat: TableRules,
  portName: string,
  proto: string,
  e: Endpoint,
  chain: string,
  affinity: number | undefined,
) {
  nat.chains.push(chain);
  const comment = input.layout.endpointComments === 'none' ? '' : ` ${q(portName)}`;
  const record = affinity === undefined ? '' : ` -m recent --set --name ${chain} --mask 255.255.255.255 --rsource`;
  nat.rules.push(
    `-A ${chain} -s ${e.ip}/32${comment} -j KUBE-MARK-MASQ`,
    `-A ${chain} -p ${proto}${comment}${record} -m ${proto} -j DNAT --to-destination ${e.ip}:${e.port}`,
  );
}

function endpointComment(layout: KubeProxyLayout, portName: string, e: Endpoint): string {
  if (layout.endpointComments === 'none') return '';
  if (layout.endpointComments === 'service') return ` ${q(portName)}`;
  return ` ${q(`${portName} -> ${e.ip}:${e.port}`)}`;
}

/** `-m statistic` as iptables-save prints it: the kernel keeps 1/n as a 31-bit fraction, saved with 11 decimals (1/3 -> 0.33333333349). */
export const savedProbability = (p: number) => (Math.round(0x80000000 * p) / 0x80000000).toFixed(11);
const probability = (left: number) =>
  left > 1 ? ` -m statistic --mode random --probability ${savedProbability(1 / left)}` : '';

/** The service port's endpoints as kube-proxy's endpoint cache holds them: sorted by "ip:port" (pkg/proxy/endpointslicecache.go). */
function sliceEndpoints(
  input: RuleInput,
  svc: V1Service,
  port: NonNullable<NonNullable<V1Service['spec']>['ports']>[number],
): Endpoint[] {
  const ns = svc.metadata?.namespace ?? 'default';
  const name = svc.metadata?.name ?? '';
  const slices = input.slices.filter(
    (s) => s.metadata?.labels?.['kubernetes.io/service-name'] === name && (s.metadata?.namespace ?? 'default') === ns,
  );
  const out: Endpoint[] = [];
  for (const slice of slices) {
    const target = slice.ports?.find((p) => (p.name ?? '') === (port.name ?? ''))?.port;
    if (target === undefined) continue;
    for (const e of slice.endpoints ?? []) {
      const c = e.conditions ?? {};
      // a nil condition means true for ready and serving (the API's documented default)
      const ready = c.ready !== false;
      for (const ip of e.addresses) {
        out.push({
          ip,
          port: target,
          local: e.nodeName === input.nodeName,
          ready,
          serving: c.serving ?? ready,
          terminating: c.terminating === true,
        });
      }
    }
  }
  return out.sort((a, b) =>
    `${a.ip}:${a.port}` < `${b.ip}:${b.port}` ? -1 : `${a.ip}:${a.port}` > `${b.ip}:${b.port}` ? 1 : 0,
  );
}

/** kube-proxy's jumps from built-in chains, in the order of its iptablesJumpChains list for this version. */
export function kubeProxyJumps(L: KubeProxyLayout): Jump[] {
  const NEW = '-m conntrack --ctstate NEW ';
  const j = (table: TableName, chain: string, spec: string): Jump => ({ table, chain, spec });
  return [
    j('filter', 'INPUT', `${NEW}${q('kubernetes externally-visible service portals')} -j KUBE-EXTERNAL-SERVICES`),
    ...(L.forwardToExternalServices
      ? [
          j(
            'filter',
            'FORWARD',
            `${NEW}${q('kubernetes externally-visible service portals')} -j KUBE-EXTERNAL-SERVICES`,
          ),
        ]
      : []),
    ...(L.inputToNodePorts
      ? [j('filter', 'INPUT', `${q('kubernetes health check service ports')} -j KUBE-NODEPORTS`)]
      : []),
    j('filter', 'FORWARD', `${NEW}${q('kubernetes service portals')} -j KUBE-SERVICES`),
    j('filter', 'OUTPUT', `${NEW}${q('kubernetes service portals')} -j KUBE-SERVICES`),
    ...(L.inputToServices ? [j('filter', 'INPUT', `${NEW}${q('kubernetes service portals')} -j KUBE-SERVICES`)] : []),
    j('filter', 'FORWARD', `${q('kubernetes forwarding rules')} -j KUBE-FORWARD`),
    ...(L.proxyFirewall
      ? (['INPUT', 'OUTPUT', 'FORWARD'] as const).map((c) =>
          j('filter', c, `${NEW}${q('kubernetes load balancer firewall')} -j KUBE-PROXY-FIREWALL`),
        )
      : []),
    j('nat', 'OUTPUT', `${q('kubernetes service portals')} -j KUBE-SERVICES`),
    j('nat', 'PREROUTING', `${q('kubernetes service portals')} -j KUBE-SERVICES`),
    j('nat', 'POSTROUTING', `${q('kubernetes postrouting rules')} -j KUBE-POSTROUTING`),
    // kubelet's chains, duplicated by kube-proxy since it stopped relying on kubelet (no comment)
    ...(L.localnetFirewall ? (['INPUT', 'OUTPUT'] as const).map((c) => j('filter', c, '-j KUBE-FIREWALL')) : []),
  ];
}

/**
 * kubelet's KUBE-MARK-DROP and KUBE-FIREWALL, for releases before kube-proxy wrote its own KUBE-FIREWALL
 * (< 1.27): KUBE-XLB chains (< 1.24) mark packets for drop and rely on these to drop them. The lab writes
 * them with kube-proxy (kubelet is not a component here).
 */
export function kubeletRules(L: KubeProxyLayout): KubeProxyRules | undefined {
  if (L.localnetFirewall) return undefined;
  return {
    tables: {
      filter: {
        chains: ['KUBE-FIREWALL'],
        rules: [
          `-A KUBE-FIREWALL ${q('kubernetes firewall for dropping marked packets')} -m mark --mark 0x8000/0x8000 -j DROP`,
          // CVE-2020-8558 (kubelet 1.19, and the 1.16.11 / 1.17.7 / 1.18.4 patch releases): traffic from outside to
          // 127.0.0.0/8, which route_localnet=1 (set by kube-proxy) would otherwise route; seen on a real v1.20.2 kubelet
          ...(L.minor >= 19
            ? [
                `-A KUBE-FIREWALL ! -s 127.0.0.0/8 -d 127.0.0.0/8 ${q('block incoming localnet connections')} -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP`,
              ]
            : []),
        ],
      },
      nat: { chains: ['KUBE-MARK-DROP'], rules: ['-A KUBE-MARK-DROP -j MARK --set-xmark 0x8000/0x8000'] },
    },
    jumps: [
      { table: 'filter', chain: 'INPUT', spec: '-j KUBE-FIREWALL' },
      { table: 'filter', chain: 'OUTPUT', spec: '-j KUBE-FIREWALL' },
    ],
  };
}

/** The iptables-restore --noflush payload that (re)writes a component's own chains (jumps are ensured separately). */
export function restorePayload(rules: KubeProxyRules): string {
  const lines: string[] = [];
  for (const table of ['filter', 'nat'] as const) {
    const t = rules.tables[table];
    if (t.chains.length === 0 && t.rules.length === 0) continue;
    lines.push(`*${table}`, ...[...new Set(t.chains)].map((c) => `:${c} - [0:0]`), ...t.rules, 'COMMIT');
  }
  return `${lines.join('\n')}\n`;
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
