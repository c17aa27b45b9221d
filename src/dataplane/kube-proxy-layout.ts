// What kube-proxy's iptables mode writes, by version. Each field is one upstream change with the
// release it landed in; a version is any "1.y" from 1.14 on, so a profile can name any release and
// the layout follows from these ranges. docs/kube-proxy-fidelity.md lists the sources of each range.
import { HarnessError } from '../model/errors.ts';

/** The oldest layout we derive; older releases predate the rules our incidents depend on. */
export const OLDEST_MINOR = 14;
/** The newest release whose layout we checked against upstream; newer minors use it. */
export const NEWEST_MINOR = 34;

export interface KubeProxyLayout {
  version: string;
  minor: number;
  /** KUBE-POSTROUTING: one marked MASQUERADE (< 1.16), + --random-fully (PR 78547, 1.16), RETURN/xor-mark/MASQUERADE (PR 92035, 1.20). */
  postrouting: 'mark-masquerade' | 'return-xor-masquerade';
  randomFully: boolean;
  /** `-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP`: none before 1.15 (PR 74840); since 1.29 left out when be_liberal=1 (PR 120412). */
  invalidDrop: 'never' | 'always' | 'unless-be-liberal';
  /** `-m nfacct --nfacct-name ct_state_invalid_dropped_pkts` on the DROP and the localhost NodePort rule, when the counters exist (1.30). */
  nfacct: boolean;
  /**
   * KUBE-FORWARD accepts established traffic by two rules "pod source/destination rule" with `-s/-d clusterCIDR`
   * (< 1.18), the same two rules without the CIDR match (PR 87748, 1.18: local-traffic detection refactor), or one
   * "kubernetes forwarding conntrack rule" (PR 97279, 1.23).
   */
  forwardConntrack: 'cluster-cidr-pair' | 'pair' | 'single';
  /** filter INPUT -> KUBE-SERVICES (ctstate NEW): 1.13 - 1.19, removed by PR 95252. */
  inputToServices: boolean;
  /** filter FORWARD -> KUBE-EXTERNAL-SERVICES (ctstate NEW): 1.20 (PR 95252). */
  forwardToExternalServices: boolean;
  /** filter INPUT -> KUBE-NODEPORTS "kubernetes health check service ports", with an ACCEPT there for each healthCheckNodePort: 1.21. */
  inputToNodePorts: boolean;
  /** KUBE-PROXY-FIREWALL from INPUT/OUTPUT/FORWARD (ctstate NEW): 1.25. */
  proxyFirewall: boolean;
  /** kube-proxy writes its own copy of kubelet's KUBE-FIREWALL ("block incoming localnet connections") and jumps to it: 1.27; before, kubelet owned that chain. */
  localnetFirewall: boolean;
  /**
   * Service labels whose presence makes kube-proxy ignore the Service and its endpoints (its informers' label
   * selector): service.kubernetes.io/service-proxy-name (KEP 0031, PR 71355, 1.14), and
   * service.kubernetes.io/headless too from 1.16 (PR 81612; upstream's e2e test for it arrived with 1.16).
   */
  ignoredLabels: readonly string[];
  /** The ClusterIP masquerade rule sits in KUBE-SERVICES (< 1.24) or in the service's own chain (1.24). */
  masqueradeInServiceChain: boolean;
  /** Comments on KUBE-SVC->KUBE-SEP and KUBE-SEP rules: none (< 1.20, appendServiceCommentLocked dropped them), the service (1.20), "svc -> ip:port" (1.24). */
  endpointComments: 'none' | 'service' | 'service-to-endpoint';
  /** KUBE-XLB: the "Redirect pods ... to clusterIP" rule comes before the "masquerade/route LOCAL traffic" rules (1.16) instead of after them. */
  xlbRedirectFirst: boolean;
  /**
   * loadBalancerSourceRanges: a KUBE-FW chain in nat for every LoadBalancer address, ending in KUBE-MARK-DROP (< 1.24);
   * a KUBE-FW chain only with source ranges, jumping to KUBE-EXT and ending in KUBE-MARK-DROP (1.24, derived: KUBE-EXT's
   * arrival with the 1.20 ending); the same chain ending in a comment, the DROP written in filter KUBE-PROXY-FIREWALL (1.25).
   */
  loadBalancerFirewall: 'fw-mark-drop' | 'ext-mark-drop' | 'proxy-firewall';
  /** externalTrafficPolicy Local: KUBE-XLB chains with KUBE-MARK-DROP (< 1.24) or KUBE-EXT/KUBE-SVL with a filter DROP (1.24). */
  externalChains: 'xlb' | 'ext';
  /** internalTrafficPolicy is honoured (beta, on by default, 1.22). */
  internalTrafficPolicy: boolean;
  /** With no ready endpoint, serving-terminating endpoints are used (ProxyTerminatingEndpoints on by default, 1.26). */
  terminatingFallback: boolean;
  /** Start-up in iptables mode ran the IPVS cleanup, deleting the shared "kubernetes forwarding rules" jump (<= 1.14; removed with the start-up auto-cleanup, KEP "remove kube-proxy automatic clean up", 1.15). */
  ipvsCleanupAtStart: boolean;
  /**
   * UDP conntrack clean-up after a sync: `event` (<= 1.31: entries to each deleted endpoint are deleted, and every
   * entry to the VIP when a service goes from no endpoints to some; pkg/proxy endpointschangetracker DeletedUDPEndpoints /
   * NewlyActiveUDPServices) or `reconciler` (1.32, PR 127318: entries to the VIP whose DNAT target is no longer an
   * endpoint are deleted, but services left with no endpoints are skipped: kubernetes#139628, fixed by kubernetes#139629).
   */
  udpConntrack: 'event' | 'reconciler-skips-empty';
}

/** A Service with this label is left to another proxy. */
export const SERVICE_PROXY_NAME = 'service.kubernetes.io/service-proxy-name';
/** The label the control plane puts on a headless Service's Endpoints; kube-proxy skips what carries it. */
export const HEADLESS_LABEL = 'service.kubernetes.io/headless';

/** Whether kube-proxy of this layout handles a Service with these labels at all. */
export function proxies(layout: KubeProxyLayout, labels: Readonly<Record<string, string>> | undefined): boolean {
  return !layout.ignoredLabels.some((l) => labels?.[l] !== undefined);
}

export const KUBE_PROXY_VERSION_PATTERN = /^1\.(\d+)$/;

export function parseMinor(version: string): number {
  const m = KUBE_PROXY_VERSION_PATTERN.exec(version);
  if (!m) throw new HarnessError('SCENARIO_INVALID', `kube-proxy version ${version}: expected 1.MINOR such as 1.29`);
  const minor = Number(m[1]);
  if (minor < OLDEST_MINOR)
    throw new HarnessError(
      'SCENARIO_INVALID',
      `kube-proxy ${version} is older than the oldest layout we derive (1.${OLDEST_MINOR})`,
    );
  return minor;
}

export function kubeProxyLayout(version: string): KubeProxyLayout {
  const v = parseMinor(version);
  return {
    version,
    minor: v,
    postrouting: v >= 20 ? 'return-xor-masquerade' : 'mark-masquerade',
    randomFully: v >= 16,
    invalidDrop: v >= 29 ? 'unless-be-liberal' : v >= 15 ? 'always' : 'never',
    nfacct: v >= 30,
    forwardConntrack: v >= 23 ? 'single' : v >= 18 ? 'pair' : 'cluster-cidr-pair',
    inputToServices: v <= 19,
    forwardToExternalServices: v >= 20,
    inputToNodePorts: v >= 21,
    proxyFirewall: v >= 25,
    localnetFirewall: v >= 27,
    masqueradeInServiceChain: v >= 24,
    ignoredLabels: v >= 16 ? [SERVICE_PROXY_NAME, HEADLESS_LABEL] : [SERVICE_PROXY_NAME],
    endpointComments: v >= 24 ? 'service-to-endpoint' : v >= 20 ? 'service' : 'none',
    xlbRedirectFirst: v >= 16,
    externalChains: v >= 24 ? 'ext' : 'xlb',
    loadBalancerFirewall: v >= 25 ? 'proxy-firewall' : v >= 24 ? 'ext-mark-drop' : 'fw-mark-drop',
    internalTrafficPolicy: v >= 22,
    terminatingFallback: v >= 26,
    ipvsCleanupAtStart: v <= 14,
    udpConntrack: v >= 32 ? 'reconciler-skips-empty' : 'event',
  };
}
