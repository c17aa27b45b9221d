// The Kubernetes objects a scenario's topology stands for, typed with @kubernetes/client-node.
// Real-cluster providers create them; the netns lab feeds them to its kube-proxy rule writer.
import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import { HarnessError } from '../model/errors.ts';
import type { TopologySpec } from '../model/scenario-schema.ts';

type ServiceSpec = TopologySpec['services'][number];

/** The API server's default sessionAffinityConfig.clientIP.timeoutSeconds (3 hours). */
export const DEFAULT_AFFINITY_SECONDS = 10800;

/** Pods backing a service carry this label; the Service selects on it. */
export const endpointLabel = (service: string) => `netrepro.io/backs-${service}`;

export function serviceObject(svc: ServiceSpec): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: svc.name,
      namespace: svc.namespace,
      labels: { ...svc.labels, 'app.kubernetes.io/managed-by': 'netrepro' },
    },
    spec: {
      type: svc.type,
      clusterIP: svc.clusterIP,
      selector: { [endpointLabel(svc.name)]: 'true' },
      ports: svc.ports.map((p) => ({
        name: p.name,
        port: p.port,
        targetPort: p.targetPort,
        protocol: p.protocol,
        ...(p.nodePort ? { nodePort: p.nodePort } : {}),
      })),
      ...(svc.type !== 'ClusterIP' ? { externalTrafficPolicy: svc.externalTrafficPolicy } : {}),
      ...(svc.loadBalancerIP ? { loadBalancerIP: svc.loadBalancerIP } : {}),
      ...(svc.loadBalancerSourceRanges ? { loadBalancerSourceRanges: svc.loadBalancerSourceRanges } : {}),
      ...(svc.healthCheckNodePort ? { healthCheckNodePort: svc.healthCheckNodePort } : {}),
      ...(svc.internalTrafficPolicy === 'Local' ? { internalTrafficPolicy: 'Local' } : {}),
      ...(svc.publishNotReadyAddresses ? { publishNotReadyAddresses: true } : {}),
      ...(svc.sessionAffinity === 'ClientIP'
        ? {
            sessionAffinity: 'ClientIP',
            sessionAffinityConfig: {
              clientIP: {
                timeoutSeconds: svc.sessionAffinityConfig?.clientIP.timeoutSeconds ?? DEFAULT_AFFINITY_SECONDS,
              },
            },
          }
        : {}),
    },
    // what a cloud controller publishes once the load balancer is up; kube-proxy writes its rules from this
    ...(svc.loadBalancerIP ? { status: { loadBalancer: { ingress: [{ ip: svc.loadBalancerIP }] } } } : {}),
  };
}

export interface PodPlacement {
  ip: string;
  node: string;
}

type PodSpec = TopologySpec['pods'][number];

/**
 * An endpoint's ready condition as the EndpointSlice controller writes it: a terminating pod is never ready,
 * unless the Service publishes not-ready addresses, which makes every endpoint ready; `serving` stays the pod's own.
 */
export function publishedReady(
  svc: Pick<ServiceSpec, 'publishNotReadyAddresses'>,
  e: { ready: boolean; terminating: boolean },
): boolean {
  return svc.publishNotReadyAddresses || (e.ready && !e.terminating);
}
type PortSpec = ServiceSpec['ports'][number];

/**
 * The pod's port a Service port leads to: a number as it is, a name looked up in the pod's named ports (of the
 * same protocol), as the endpoints controllers' FindPort does; undefined where the pod has no such port.
 */
export function targetPortOf(port: PortSpec, pod: Pick<PodSpec, 'ports'> | undefined): number | undefined {
  if (typeof port.targetPort === 'number') return port.targetPort;
  return pod?.ports?.find((p) => p.name === port.targetPort && p.protocol === port.protocol)?.containerPort;
}

/**
 * The EndpointSlices of a Service, as its controller groups endpoints: one slice per set of resolved ports, so a
 * named targetPort that resolves differently (or not at all) pod by pod splits them. `pods`: the topology's pods,
 * whose named ports a targetPort may name.
 */
export function endpointSlices(
  svc: ServiceSpec,
  placements: ReadonlyMap<string, PodPlacement>,
  pods: readonly Pick<PodSpec, 'name' | 'ports'>[] = [],
): V1EndpointSlice[] {
  const groups = new Map<
    string,
    { ports: { name?: string; port: number; protocol: string }[]; endpoints: V1EndpointSlice['endpoints'] }
  >();
  const portsOf = (pod: string) =>
    svc.ports.flatMap((p) => {
      const port = targetPortOf(
        p,
        pods.find((x) => x.name === pod),
      );
      return port === undefined ? [] : [{ name: p.name, port, protocol: p.protocol }];
    });
  for (const { pod: name, ready, terminating } of svc.endpoints) {
    const pod = placements.get(name);
    if (!pod) throw new Error(`endpoint pod ${name} of service ${svc.name} has no address`);
    const ports = portsOf(name);
    // a pod with none of the Service's ports is no endpoint of it
    if (ports.length === 0) continue;
    const key = JSON.stringify(ports);
    const group = groups.get(key) ?? { ports, endpoints: [] };
    groups.set(key, group);
    group.endpoints.push({
      addresses: [pod.ip],
      nodeName: pod.node,
      conditions: { ready: publishedReady(svc, { ready, terminating }), serving: ready, terminating },
      targetRef: { kind: 'Pod', name, namespace: svc.namespace },
    });
  }
  // without endpoints the Service still has its slice, with the ports that need no pod to resolve
  if (groups.size === 0)
    groups.set('', {
      ports: svc.ports.flatMap((p) =>
        typeof p.targetPort === 'number' ? [{ name: p.name, port: p.targetPort, protocol: p.protocol }] : [],
      ),
      endpoints: [],
    });
  return [...groups.values()].map((g, i) => ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    addressType: 'IPv4',
    metadata: {
      name: `${svc.name}-netrepro${i === 0 ? '' : `-${i}`}`,
      namespace: svc.namespace,
      labels: { 'kubernetes.io/service-name': svc.name },
    },
    endpoints: g.endpoints,
    ports: g.ports,
  }));
}

/**
 * Scenario namespace of each pod: that of the services it backs; a pod backing none (yet: an `endpoint` step
 * may add it later, and a Service selects only pods of its own namespace) goes where all the Services are
 * when they share one namespace, else to `default`.
 */
export function podNamespaces(topology: TopologySpec): Map<string, string> {
  const out = new Map<string, string>();
  for (const svc of topology.services) {
    for (const { pod } of svc.endpoints) {
      const seen = out.get(pod);
      if (seen && seen !== svc.namespace) {
        throw new HarnessError(
          'SCENARIO_INVALID',
          `pod ${pod} backs services in namespaces ${seen} and ${svc.namespace}; a real pod lives in one namespace`,
        );
      }
      out.set(pod, svc.namespace);
    }
  }
  const shared = new Set(topology.services.map((s) => s.namespace));
  const fallback = shared.size === 1 ? [...shared][0]! : 'default';
  for (const pod of topology.pods) if (!out.has(pod.name)) out.set(pod.name, fallback);
  return out;
}
