// The Kubernetes objects a scenario's topology stands for, typed with @kubernetes/client-node.
// Real-cluster providers create them; the netns lab feeds them to its kube-proxy rule writer.
import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';
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
      ...(svc.type === 'NodePort' ? { externalTrafficPolicy: svc.externalTrafficPolicy } : {}),
      ...(svc.internalTrafficPolicy === 'Local' ? { internalTrafficPolicy: 'Local' } : {}),
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
  };
}

export interface PodPlacement {
  ip: string;
  node: string;
}

export function endpointSliceObject(svc: ServiceSpec, pods: ReadonlyMap<string, PodPlacement>): V1EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    addressType: 'IPv4',
    metadata: {
      name: `${svc.name}-netrepro`,
      namespace: svc.namespace,
      labels: { 'kubernetes.io/service-name': svc.name },
    },
    endpoints: svc.endpoints.map(({ pod: name, ready, terminating }) => {
      const pod = pods.get(name);
      if (!pod) throw new Error(`endpoint pod ${name} of service ${svc.name} has no address`);
      // the EndpointSlice controller's conditions: a terminating pod is never ready, serving says whether it still passes its probe
      const conditions = { ready: ready && !terminating, serving: ready, terminating };
      return {
        addresses: [pod.ip],
        nodeName: pod.node,
        conditions,
        targetRef: { kind: 'Pod', name, namespace: svc.namespace },
      };
    }),
    ports: svc.ports.map((p) => ({ name: p.name, port: p.targetPort, protocol: p.protocol })),
  };
}
