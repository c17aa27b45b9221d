// Whether a real cluster can stand for a scenario's topology at all. A misfit is a skip with the
// reason (UnsupportedScenarioError), checked before anything is created.
import { kubeProxyLayout } from '../../../dataplane/kube-proxy-layout.ts';
import type { TopologySpec } from '../../../model/scenario-schema.ts';
import type { Misfit } from '../../../contract/provider.ts';
import { ciliumSettings } from './cilium-settings.ts';
import { standInRefusal } from './kube-proxy-stand-in.ts';
import { REAL_CNIS, type RealCni, type ResolvedRealOptions } from './real-options.ts';

/** The scenario's CNI shape, or why a real cluster cannot have it. */
export function fitCni(
  topology: TopologySpec,
  options: ResolvedRealOptions,
): { cni: RealCni } | { reason: string; hint?: string } {
  const cni: string = topology.cni;
  if (!(REAL_CNIS as readonly string[]).includes(cni))
    return { reason: `CNI shape ${cni} has no real-cluster install` };
  // flannel keeps the per-node cni0 bridge of the bridge shape (VXLAN only between nodes), so a
  // bridge scenario is meaningful on it: that is what the flannel cells of the CI matrix run
  if (options.cni === 'flannel' && cni === 'bridge') return flannelFits(topology) ?? { cni: 'flannel' };
  if (options.cni && options.cni !== cni)
    return {
      reason: `scenario needs CNI ${cni}, this run selects ${options.cni} (NETREPRO_CNI)`,
      hint: `run it with NETREPRO_CNI=${cni}`,
    };
  return (cni === 'flannel' && flannelFits(topology)) || { cni: cni as RealCni };
}

function flannelFits(topology: TopologySpec): { reason: string } | undefined {
  if (topology.clusterCIDR === '10.244.0.0/16') return undefined;
  return {
    reason: `the pinned flannel manifest's network is 10.244.0.0/16, the scenario's clusterCIDR is ${topology.clusterCIDR}`,
  };
}

/**
 * kube-proxy's rule layout comes with the cluster's Kubernetes version. The incidents depend on the
 * INVALID DROP (none before 1.15; always; since 1.29 unless be_liberal), so the cluster must run a
 * release that writes it as the profile's release does (src/dataplane/kube-proxy-layout.ts), with each
 * node's be_liberal as the topology sets it when kube-proxy first starts (kube-proxy-stand-in.ts).
 */
export function fitKubeProxy(topology: TopologySpec, k8sVersion: string): { reason: string; hint: string } | undefined {
  const liberalAtStart = (sysctls: Record<string, unknown> = {}) =>
    String(sysctls['net.netfilter.nf_conntrack_tcp_be_liberal'] ?? '0') !== '0';
  const liberal = topology.nodes.some((node) => liberalAtStart(node.sysctls));
  if (
    standInRefusal(topology.kubeProxy, k8sVersion, { beLiberal: liberal, services: topology.services.length > 0 }) ===
    undefined
  )
    return undefined;
  const profile = kubeProxyLayout(topology.kubeProxy);
  const range =
    profile.invalidDrop === 'never'
      ? '1.14'
      : profile.invalidDrop === 'always'
        ? liberal || topology.services.length > 0
          ? '1.15 to 1.28'
          : '1.15 or later'
        : '1.29 or later';
  return {
    reason: `kube-proxy profile ${topology.kubeProxy} needs a Kubernetes release that writes KUBE-FORWARD's INVALID DROP the same way (${range}), the cluster would run ${k8sVersion}`,
    hint: `set NETREPRO_K8S_VERSION to a ${range} release the provider can run`,
  };
}

/**
 * What a real provider's nodes cannot be set up with: their CNI conflist always chains portmap; `ownNodes` (the
 * `local` provider, whose nodes are namespaces it wires itself and whose kube-proxy it configures) can leave out
 * the default route, boot with a FORWARD policy of DROP and give kube-proxy the scenario's configuration.
 */
/**
 * A captured state (netrepro import) is restored by the netns lab alone: a real node's kube-proxy would rewrite
 * the restored rules at its first sync, and its runtime and IPAM choose the addresses, not the scenario.
 */
export function fitCaptured(topology: TopologySpec): Misfit | undefined {
  const captured = topology.nodes.find((n) => n.captured);
  if (captured)
    return {
      reason: `node ${captured.name} holds a captured state (netrepro import): restoring it verbatim, instead of kube-proxy's rules, is the netns lab's; a real cluster's kube-proxy would rewrite it at its first sync`,
      hint: 'run it with --provider netns',
    };
  const node = topology.nodes.find((n) => n.address !== undefined);
  if (node)
    return {
      reason: `node ${node.name} names its address (${node.address}); a real cluster's nodes take the addresses their network gives them`,
      hint: 'leave `address` out, or run it with --provider netns',
    };
  const pod = topology.pods.find((p) => p.ip !== undefined);
  if (pod)
    return {
      reason: `pod ${pod.name} names its ip (${pod.ip}); a real cluster's IPAM hands out its pods' addresses`,
      hint: 'leave `ip` out, or run it with --provider netns',
    };
  return undefined;
}

export function fitNodeSetup(topology: TopologySpec, ownNodes = false): Misfit | undefined {
  const chain = topology.nodes.find((n) => n.cniChain && !n.cniChain.includes('portmap'));
  if (chain)
    return {
      reason: `node ${chain.name}'s CNI chain [${chain.cniChain!.join(', ')}] has no portmap; a real cluster's conflist always chains it`,
      hint: 'run it with --provider netns',
    };
  const routeless = ownNodes ? undefined : topology.nodes.find((n) => n.defaultRoute === 'none');
  if (routeless)
    return {
      reason: `node ${routeless.name} has defaultRoute: none; a real cluster's nodes keep their network's default route`,
      hint: 'run it with --provider netns or local',
    };
  const dropping = ownNodes ? undefined : topology.nodes.find((n) => n.forwardPolicy === 'DROP');
  if (dropping)
    return {
      reason: `node ${dropping.name} boots with forwardPolicy: DROP; this provider's nodes boot with their image's policy`,
      hint: 'set it after boot with a `forward-policy` step in baseline.steps, or run it with --provider netns or local',
    };
  const headless = ownNodes ? undefined : topology.services.find((s) => s.clusterIP === 'None');
  if (headless)
    return {
      reason: `service ${headless.name} is headless: its DNS records are its pods' addresses, which this provider's cluster hands out only once the DNS program runs`,
      hint: 'run it with --provider netns or local',
    };
  const config = Object.keys(topology.kubeProxyConfig ?? {});
  if (!ownNodes && config.length > 0)
    return {
      reason: `topology.kubeProxyConfig sets ${config.join(' and ')}; this provider's kube-proxy runs with its installer's configuration`,
      hint: 'run it with --provider netns or local',
    };
  return undefined;
}

export function minikubeMisfit(topology: TopologySpec, cni: RealCni): { reason: string; hint?: string } | undefined {
  if (cni === 'bridge' && topology.nodes.length > 1) {
    return {
      reason: 'minikube --cni=bridge has no routes between nodes (single node only)',
      hint: 'run multi-node bridge scenarios with --provider kind',
    };
  }
  if (cni === 'cilium' && ciliumSettings(topology).kubeProxyReplacement) {
    return {
      reason:
        "Cilium's kube-proxy replacement needs a cluster without kube-proxy; netrepro's minikube clusters run kubeadm's",
      hint: 'run it with --provider kind',
    };
  }
  return undefined;
}

export function k3sMisfit(topology: TopologySpec, cni: RealCni): { reason: string; hint?: string } | undefined {
  if (topology.nodes.length > 1)
    return {
      reason: `K3sContainer runs one server node, the scenario has ${topology.nodes.length} nodes`,
      hint: 'run it with --provider kind or minikube',
    };
  if (cni === 'bridge')
    return {
      reason: 'k3s has no plain bridge CNI option (its flannel uses cni0 too: NETREPRO_CNI=flannel)',
      hint: 'run it with --provider kind',
    };
  return undefined;
}

/** The API server's default --service-node-port-range; a NodePort outside it is refused with 422 Invalid. */
const NODE_PORT_RANGE = [30000, 32767] as const;

/** A nodePort the lab accepts but a real API server refuses, found before a cluster is made for it. */
export function fitNodePorts(topology: TopologySpec): Misfit | undefined {
  const [low, high] = NODE_PORT_RANGE;
  for (const svc of topology.services)
    for (const p of svc.ports)
      if (p.nodePort !== undefined && (p.nodePort < low || p.nodePort > high))
        return {
          reason: `service ${svc.name}'s nodePort ${p.nodePort} is outside the API server's default range ${low}-${high}, which refuses it`,
          hint: `choose a nodePort in ${low}-${high}, or run it with --provider netns`,
        };
  for (const svc of topology.services)
    if (svc.healthCheckNodePort !== undefined && (svc.healthCheckNodePort < low || svc.healthCheckNodePort > high))
      return {
        reason: `service ${svc.name}'s healthCheckNodePort ${svc.healthCheckNodePort} is outside the API server's default node port range ${low}-${high}, which refuses it`,
        hint: `choose a port in ${low}-${high}, or run it with --provider netns`,
      };
  return undefined;
}

/**
 * A LoadBalancer Service on a container-based cluster: its address is published in its status as the local
 * provider publishes it, which has run on `local` only; k3s's own ServiceLB controller would write that status
 * itself (its node addresses), so its load balancer would not be the scenario's.
 */
export function fitLoadBalancers(topology: TopologySpec, provider: 'kind' | 'minikube' | 'k3s'): Misfit | undefined {
  const lb = topology.services.find((s) => s.type === 'LoadBalancer');
  if (!lb) return undefined;
  return {
    reason:
      provider === 'k3s'
        ? `service ${lb.name} is a LoadBalancer: k3s's ServiceLB publishes its own address for it, not the scenario's loadBalancerIP`
        : `service ${lb.name} is a LoadBalancer: publishing its loadBalancerIP in its status (no cloud controller runs) has run on the local provider only, not on ${provider}`,
    hint: 'run it with --provider local or --provider netns',
  };
}

/**
 * Endpoint conditions a real cluster can make at start: a not-ready endpoint is a pod whose readiness probe
 * always fails (readiness is the pod's, so it must be not ready in every Service listing it); a terminating
 * one needs a pod being deleted, which no real provider makes.
 */
export function fitEndpointConditions(topology: TopologySpec): Misfit | undefined {
  const terminating = topology.services.find((svc) => svc.endpoints.some((e) => e.terminating));
  if (terminating)
    return {
      reason: `service ${terminating.name} starts with a terminating endpoint; a real cluster makes one only by deleting its pod, which netrepro does not do at start`,
      hint: 'run it with --provider netns',
    };
  const readiness = new Map<string, { ready: boolean; svc: string }>();
  for (const svc of topology.services)
    for (const e of svc.endpoints) {
      const seen = readiness.get(e.pod);
      if (seen && seen.ready !== e.ready)
        return {
          reason: `pod ${e.pod} is a ${seen.ready ? 'ready' : 'not-ready'} endpoint of service ${seen.svc} and a ${e.ready ? 'ready' : 'not-ready'} one of ${svc.name}; on a real cluster readiness is the pod's, the same in every Service`,
          hint: 'use a pod of its own for each readiness, or run it with --provider netns',
        };
      readiness.set(e.pod, { ready: e.ready, svc: svc.name });
    }
  return undefined;
}

/** The pods a real cluster starts with a readiness probe that never passes (their endpoints are not ready). */
export function notReadyPods(topology: TopologySpec): Set<string> {
  return new Set(topology.services.flatMap((svc) => svc.endpoints.filter((e) => !e.ready).map((e) => e.pod)));
}

/** Everything a real provider checks before creating anything: the CNI shape, kube-proxy's layout, its own limits. */
export function realMisfit(
  provider: 'kind' | 'minikube' | 'k3s',
  topology: TopologySpec,
  options: ResolvedRealOptions,
): Misfit | undefined {
  const fit = fitCni(topology, options);
  if ('reason' in fit) return fit;
  const own = provider === 'k3s' ? k3sMisfit : provider === 'minikube' ? minikubeMisfit : () => undefined;
  return (
    fitCaptured(topology) ??
    fitKubeProxy(topology, options.k8sVersion) ??
    fitNodePorts(topology) ??
    fitLoadBalancers(topology, provider) ??
    fitEndpointConditions(topology) ??
    fitNodeSetup(topology) ??
    own(topology, fit.cni)
  );
}
