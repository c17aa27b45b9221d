// The slice of the Kubernetes API the real providers use. An interface so tests record the
// objects a run would create without a server (test/providers), and client-kube-api.ts talks
// to a real one through @kubernetes/client-node.
import type { V1ConfigMap, V1Namespace, V1Pod, V1Service } from '@kubernetes/client-node';
import type { ExecOptions, ExecResult, Spawned } from '../../../contract/command.ts';

export interface ClusterNode {
  name: string;
  internalIP: string;
  podCIDR?: string;
  /** status.nodeInfo.kubeletVersion, e.g. v1.35.1 or v1.35.1+k3s1: the release whose kube-proxy runs on the node. */
  kubeletVersion?: string;
}

export interface PodRef {
  namespace: string;
  name: string;
  container: string;
}

export interface KubeApi {
  listNodes(): Promise<ClusterNode[]>;
  createNamespace(body: V1Namespace): Promise<void>;
  createConfigMap(body: V1ConfigMap): Promise<void>;
  /** Returns the Service as created, with the ClusterIP the cluster allocated. */
  createService(body: V1Service): Promise<V1Service>;
  createPod(body: V1Pod): Promise<void>;
  /** A JSON merge patch (RFC 7386) of a pod: a label set to null is removed. */
  patchPod(namespace: string, name: string, patch: object): Promise<void>;
  /** A JSON merge patch (RFC 7386) of a Service: a list in it (spec.ports) replaces the list whole. */
  patchService(namespace: string, name: string, patch: object): Promise<void>;
  /** A JSON merge patch of a Service's status (what a cloud controller writes: status.loadBalancer.ingress). */
  patchServiceStatus(namespace: string, name: string, patch: object): Promise<void>;
  /**
   * Waits until the pod is Running with an address and Ready, or, with `ready: false`, with every container
   * started and the kubelet reporting it not Ready; returns it (status.podIP set).
   */
  waitPodReady(namespace: string, name: string, timeoutMs: number, ready?: boolean): Promise<V1Pod>;
  /** Waits until the pod's sandbox has an address (its containers may still be starting); returns it. */
  waitPodAddressed(namespace: string, name: string, timeoutMs: number): Promise<string>;
  logs(pod: PodRef): Promise<string>;
  exec(pod: PodRef, argv: readonly string[], options?: ExecOptions): Promise<ExecResult>;
  /** A long-running exec (tcpdump): lines as they come, stop() interrupts it in the container. */
  spawn(pod: PodRef, argv: readonly string[]): Spawned;
  deleteNamespace(name: string): Promise<void>;
  /**
   * Deletes the pod with a 1 s grace period and waits until the API no longer has it: the kubelet removes it once
   * its containers are killed and its sandbox stopped (the CNI DEL), so its address is free by then.
   */
  deletePod(namespace: string, name: string, timeoutMs: number): Promise<void>;
}
