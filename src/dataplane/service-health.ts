// kube-proxy's service health server (pkg/proxy/healthcheck/service_health.go): for every LoadBalancer Service
// with externalTrafficPolicy Local it listens on the Service's healthCheckNodePort on every node, and answers
// 200 where the node has local ready endpoints, 503 where it has none. What it answers is written here, byte for
// byte as kube-proxy v1.20.2 writes it; the lab's server (agent/health-check.c) and its tests follow this.
import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import { type KubeProxyLayout, proxies } from './kube-proxy-layout.ts';

/** One Service's health check on one node: where it listens and the count it reports. */
export interface ServiceHealth {
  namespace: string;
  name: string;
  port: number;
  /** The node's local ready endpoints: distinct addresses, whatever the port (EndpointsMap getLocalEndpointIPs). */
  localEndpoints: number;
}

/**
 * The health checks kube-proxy serves on `nodeName`: a Service needs one when it is a LoadBalancer with
 * externalTrafficPolicy Local (NeedsHealthCheck in pkg/api/v1/service/util.go) and a healthCheckNodePort.
 */
export function serviceHealth(
  layout: KubeProxyLayout,
  services: readonly V1Service[],
  slices: readonly V1EndpointSlice[],
  nodeName: string,
): ServiceHealth[] {
  return services
    .filter(
      (s) =>
        s.spec?.type === 'LoadBalancer' &&
        s.spec.externalTrafficPolicy === 'Local' &&
        (s.spec.healthCheckNodePort ?? 0) > 0 &&
        s.spec.clusterIP !== 'None' &&
        proxies(layout, s.metadata?.labels),
    )
    .map((s) => {
      const namespace = s.metadata?.namespace ?? 'default';
      const name = s.metadata?.name ?? '';
      const local = new Set(
        slices
          .filter(
            (sl) =>
              sl.metadata?.labels?.['kubernetes.io/service-name'] === name &&
              (sl.metadata?.namespace ?? 'default') === namespace,
          )
          // kube-proxy's endpoint cache holds ready endpoints only (endpointslicecache.go, a nil condition is ready)
          .flatMap((sl) => sl.endpoints ?? [])
          .filter((e) => e.nodeName === nodeName && e.conditions?.ready !== false)
          .flatMap((e) => e.addresses),
      );
      return { namespace, name, port: s.spec!.healthCheckNodePort!, localEndpoints: local.size };
    });
}

/** The status line kube-proxy's handler writes: 503 without a local endpoint. */
export const healthStatus = (localEndpoints: number): string =>
  localEndpoints === 0 ? '503 Service Unavailable' : '200 OK';

/**
 * The body: Go's `strings.Trim(dedent.Dedent(...), "\n")` of the handler's template, tab-indented, with no
 * newline at the end.
 */
export function healthBody(namespace: string, name: string, localEndpoints: number): string {
  return `{\n\t"service": {\n\t\t"namespace": ${JSON.stringify(namespace)},\n\t\t"name": ${JSON.stringify(name)}\n\t},\n\t"localEndpoints": ${localEndpoints}\n}`;
}
