// The Kubernetes objects a lab stands for, as `kubectl get ... -o json` would list them on a cluster: its nodes
// (podCIDR, InternalIP), pods (IP, node, ports), Services and EndpointSlices. A netns lab has no API server;
// it writes these beside its state so `netrepro capture --run` can put them in a bundle as a cluster's.
import type { TopologySpec } from '../model/scenario-schema.ts';
import { endpointSlices, podNamespaces, serviceObject } from './kube-objects.ts';

/** A v1 List, as kubectl prints several objects. */
export interface KubeList {
  apiVersion: 'v1';
  kind: 'List';
  items: unknown[];
}

export interface LabClusterObjects {
  nodes: KubeList;
  pods: KubeList;
  services: KubeList;
  endpointslices: KubeList;
}

const list = (items: unknown[]): KubeList => ({ apiVersion: 'v1', kind: 'List', items });

/** The objects of `topology` with the addresses the lab gave its nodes and pods (`node/x`, `pod/y`). */
export function labClusterObjects(
  topology: TopologySpec,
  address: (ref: string) => string | undefined,
): LabClusterObjects {
  const namespaces = podNamespaces(topology);
  const placements = new Map(
    topology.pods.flatMap((p) => {
      const ip = address(`pod/${p.name}`);
      return ip ? [[p.name, { ip, node: p.node }] as const] : [];
    }),
  );
  return {
    nodes: list(
      topology.nodes.map((n) => ({
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: n.name, labels: { 'kubernetes.io/hostname': n.name } },
        spec: { podCIDR: n.podCIDR, podCIDRs: [n.podCIDR] },
        status: {
          addresses: [
            ...(address(`node/${n.name}`) ? [{ type: 'InternalIP', address: address(`node/${n.name}`) }] : []),
            { type: 'Hostname', address: n.name },
          ],
        },
      })),
    ),
    pods: list(
      topology.pods.map((p) => {
        const ip = placements.get(p.name)?.ip;
        return {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: p.name, namespace: namespaces.get(p.name) ?? 'default' },
          spec: { nodeName: p.node, hostNetwork: false, containers: [{ name: 'agent', ports: containerPorts(p) }] },
          status: {
            phase: 'Running',
            ...(ip ? { podIP: ip, podIPs: [{ ip }] } : {}),
            ...(address(`node/${p.node}`) ? { hostIP: address(`node/${p.node}`) } : {}),
          },
        };
      }),
    ),
    services: list(
      topology.services.map((s) => {
        const o = serviceObject(s);
        // the API server's view has no selector label of ours to explain: keep what a reader needs
        return { ...o, spec: { ...o.spec, ...(s.clusterIP !== 'None' ? { clusterIPs: [s.clusterIP] } : {}) } };
      }),
    ),
    endpointslices: list(topology.services.flatMap((s) => endpointSlices(s, placements, topology.pods))),
  };
}

type PodSpec = TopologySpec['pods'][number];

/** The pod's container ports: its named ports, the ports its programs serve on, and its hostPorts. */
function containerPorts(pod: PodSpec) {
  const ports: { name?: string; containerPort: number; protocol: string; hostPort?: number; hostIP?: string }[] = [];
  for (const p of pod.ports ?? []) ports.push({ name: p.name, containerPort: p.containerPort, protocol: p.protocol });
  for (const program of pod.serve ?? []) {
    const [kind, port] = Object.entries(program)[0] as [string, number];
    const protocol = kind === 'http' ? 'TCP' : 'UDP';
    if (!ports.some((x) => x.containerPort === port && x.protocol === protocol))
      ports.push({ containerPort: port, protocol });
  }
  for (const h of pod.hostPorts ?? []) {
    const same = ports.find((x) => x.containerPort === h.containerPort && x.protocol === h.protocol);
    const mapped = { hostPort: h.hostPort, ...(h.hostIP ? { hostIP: h.hostIP } : {}) };
    if (same) Object.assign(same, mapped);
    else ports.push({ containerPort: h.containerPort, protocol: h.protocol, ...mapped });
  }
  return ports;
}
