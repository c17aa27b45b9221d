// The namespaces, agent ConfigMap, Services and Pods a topology becomes on a real cluster (pure).
// Differences from the netns lab, all on purpose:
// - every namespace is prefixed with the run prefix (the scenario's kube-system must not be the real one);
// - ClusterIPs are allocated by the cluster (10.96.0.10 is the real kube-dns), addresses are read back;
// - a pod lives in the namespace of the services it backs (Service selectors are namespaced).
import type { V1ConfigMap, V1Container, V1Namespace, V1Pod, V1Probe, V1Service } from '@kubernetes/client-node';
import { HarnessError } from '../../../model/errors.ts';
import type { TopologySpec } from '../../../model/scenario-schema.ts';
import { endpointLabel, serviceObject } from '../../../contract/kube-objects.ts';
import { notReadyPods } from './scenario-fit.ts';
import { agentProgramArgv } from '../../../contract/agent-program.ts';
import { hostIPAddress } from '../../../dataplane/port-mappings.ts';

type PodSpec = TopologySpec['pods'][number];

export const AGENT_CONFIGMAP = 'netrepro-agent';
export const AGENT_DIR = '/netrepro';
/** StartedCluster.agentCommand on real clusters; the pod target runs it in the `agent` container. */
export const AGENT_COMMAND = ['node', `${AGENT_DIR}/pod-agent.mjs`] as const;

export interface WorkloadImages {
  probeImage: string;
  agentImage: string;
  /**
   * The agent as a program in the agent image (the `local` provider's pod image holds the native agent):
   * no ConfigMap, no Node. Default: pod-agent.mjs from the ConfigMap, run by `node`.
   */
  agentCommand?: readonly string[];
  /** `Never` for images imported into the nodes, which no registry has. */
  pullPolicy?: 'Never' | 'IfNotPresent';
  /**
   * The cluster is the run's own, created for this scenario (`local`): the scenario's namespaces and Service
   * clusterIPs as they are (kube-proxy's chain names and comments then are the lab's), no namespace to delete.
   */
  ownCluster?: boolean;
}

/** The argv prefix that runs the agent in a pod of a cluster using `images`. */
export const agentCommandOf = (images: WorkloadImages): readonly string[] => images.agentCommand ?? AGENT_COMMAND;

const managed = (runId: string) => ({ 'app.kubernetes.io/managed-by': 'netrepro', 'netrepro.io/run': runId });

export const clusterNamespace = (prefix: string, scenarioNamespace: string) => `${prefix}${scenarioNamespace}`;

// where a pod lives is the contract's (the netns lab's cluster objects place pods the same way)
export { podNamespaces } from '../../../contract/kube-objects.ts';
import { podNamespaces } from '../../../contract/kube-objects.ts';

export function namespaceObjects(topology: TopologySpec, prefix: string, runId: string): V1Namespace[] {
  const names = new Set([...podNamespaces(topology).values(), ...topology.services.map((s) => s.namespace)]);
  return [...names].sort().map((ns) => ({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: clusterNamespace(prefix, ns), labels: managed(runId) },
  }));
}

export function agentConfigMap(namespace: string, agentSource: string, runId: string): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: AGENT_CONFIGMAP, namespace, labels: managed(runId) },
    data: { 'pod-agent.mjs': agentSource },
  };
}

export function serviceObjects(
  topology: TopologySpec,
  prefix: string,
  runId: string,
  keepClusterIPs = false,
): V1Service[] {
  return topology.services.map((svc) => {
    const base = serviceObject(svc);
    const { clusterIP: allocatedByTheCluster, ...rest } = base.spec!;
    const spec = keepClusterIPs ? { ...rest, clusterIP: allocatedByTheCluster } : rest;
    return {
      ...base,
      metadata: {
        ...base.metadata,
        namespace: clusterNamespace(prefix, svc.namespace),
        labels: { ...base.metadata!.labels, ...managed(runId) },
      },
      spec,
    };
  });
}

/** A not-ready endpoint is a running pod the kubelet's readiness probe keeps out of the Service's ready set. */
export const NEVER_READY: V1Probe = { exec: { command: ['false'] }, periodSeconds: 1 };

export interface PodInput {
  pod: PodSpec;
  namespace: string;
  /** Kubernetes node name the scenario node maps to. */
  nodeName: string;
  /** `--record=NAME=IP` flags for DNS programs (the real ClusterIPs). */
  dnsRecords: string[];
  /** A node's address as the cluster lists it (`node/NAME`), for a hostPort bound to it. */
  address?: (ref: string) => string;
}

/** The cluster's addresses as the pod's input gives them: a hostPort bound to its node's address needs them. */
function addressOf(input: PodInput): (ref: string) => string {
  return (
    input.address ??
    ((ref) => {
      throw new HarnessError('LAB_FAILED', `pod ${input.pod.name}: no address for ${ref}, its hostPort's hostIP`);
    })
  );
}

/**
 * One pod = `probe` (netshoot: curl, nslookup, tcpdump; privileged so pod-side sysctl steps work),
 * `agent` (idle node, for agent probes such as dns-query) and one `serve-N` container per program,
 * all sharing the pod's network namespace, so every one of them speaks with the pod IP.
 */
export function podObject(input: PodInput, topology: TopologySpec, images: WorkloadImages, runId: string): V1Pod {
  const { pod, namespace, nodeName, dnsRecords } = input;
  const labels: Record<string, string> = { ...managed(runId), 'netrepro.io/pod': pod.name };
  for (const svc of topology.services)
    if (svc.endpoints.some((e) => e.pod === pod.name)) labels[endpointLabel(svc.name)] = 'true';
  const fromConfigMap = images.agentCommand === undefined;
  const agent = agentCommandOf(images);
  const agentVolume = fromConfigMap ? { volumeMounts: [{ name: 'agent', mountPath: AGENT_DIR, readOnly: true }] } : {};
  const pull = images.pullPolicy ? { imagePullPolicy: images.pullPolicy } : {};
  const serve: V1Container[] = (pod.serve ?? []).map((program, i) => ({
    name: `serve-${i}`,
    image: images.agentImage,
    ...pull,
    command: agentProgramArgv(agent, program, pod.name, dnsRecords),
    // what it serves, as a pod declares it: `netrepro capture` reads it back from the Pod (no name: a Service's named
    // targetPort resolves to the probe container's)
    ports: [programPort(program)],
    ...agentVolume,
  }));
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: pod.name, namespace, labels },
    spec: {
      // pinned like the lab's pod-to-node placement; nodeName bypasses the scheduler (and control-plane taints)
      nodeName,
      terminationGracePeriodSeconds: 0,
      enableServiceLinks: false,
      containers: [
        {
          name: 'probe',
          image: images.probeImage,
          ...pull,
          command: ['sleep', 'infinity'],
          securityContext: { privileged: true },
          ...(notReadyPods(topology).has(pod.name) ? { readinessProbe: NEVER_READY } : {}),
          // named ports are what a Service's targetPort name resolves to; hostPorts belong to the pod's sandbox:
          // the runtime hands them to the CNI chain's portmap
          ...(pod.ports || pod.hostPorts
            ? {
                ports: [
                  ...(pod.ports ?? []).map((p) => ({
                    name: p.name,
                    containerPort: p.containerPort,
                    protocol: p.protocol,
                  })),
                  ...(pod.hostPorts ?? []).map((h) => ({
                    containerPort: h.containerPort,
                    hostPort: h.hostPort,
                    protocol: h.protocol,
                    ...(h.hostIP === undefined ? {} : { hostIP: hostIPAddress(h.hostIP, addressOf(input)) }),
                  })),
                ],
              }
            : {}),
        },
        { name: 'agent', image: images.agentImage, ...pull, command: ['sleep', 'infinity'], ...agentVolume },
        ...serve,
      ],
      ...(fromConfigMap ? { volumes: [{ name: 'agent', configMap: { name: AGENT_CONFIGMAP } }] } : {}),
    },
  };
}

/** The port a serve program listens on, with its protocol. */
function programPort(program: NonNullable<TopologySpec['pods'][number]['serve']>[number]): {
  containerPort: number;
  protocol: 'TCP' | 'UDP';
} {
  if (program.http !== undefined) return { containerPort: program.http, protocol: 'TCP' };
  return { containerPort: program.udp ?? program.dns!, protocol: 'UDP' };
}
