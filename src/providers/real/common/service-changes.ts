// The `endpoint` and `service` steps on a real cluster, the same for every real provider: the change goes
// through the API (an endpoint is the pod's label its Service selects on, a Service change a JSON merge patch
// of its spec), then the step waits until every node's kube-proxy has written it (wait-rules.ts). Where
// kube-proxy's rules are not what translates Services (Cilium without kube-proxy, or its socket LB in pods),
// nothing on a node shows when a change took effect, so the step is refused before anything is sent.
import { HarnessError } from '../../../model/errors.ts';
import type { TopologySpec } from '../../../model/scenario-schema.ts';
import { DEFAULT_AFFINITY_SECONDS, endpointLabel, targetPortOf } from '../../../contract/kube-objects.ts';
import type { LabAction, Target } from '../../../contract/provider.ts';
import { kubeProxyLayout, proxies } from '../../../dataplane/kube-proxy-layout.ts';
import { ciliumSettings } from './cilium-settings.ts';
import type { KubeApi } from './kube-api.ts';
import type { RealCni } from './real-options.ts';
import {
  clusterIPEndpoints,
  clusterIPRules,
  firewallRanges,
  loadBalancerRules,
  mentions,
  nodePortRules,
  showsAffinity,
  showsLocalExternalPolicy,
  type NodeRules,
  type ServiceRef,
} from './service-rules.ts';
import { waitRules } from './wait-rules.ts';
import { clusterNamespace, podNamespaces } from './workload-objects.ts';

type EndpointAction = Extract<LabAction, { kind: 'endpoint' }>;
type ServiceAction = Extract<LabAction, { kind: 'service' }>;
type Port = TopologySpec['services'][number]['ports'][number];

/** The service step's fields sent to the API server; any other is refused, never dropped. */
const SERVICE_FIELDS = new Set([
  'kind',
  'name',
  'type',
  'ports',
  'nodePorts',
  'externalTrafficPolicy',
  'internalTrafficPolicy',
  'sessionAffinity',
  'sessionAffinityConfig',
  'labels',
  'publishNotReadyAddresses',
  'loadBalancerSourceRanges',
]);

/** A Service as the topology and the steps so far left it. */
interface ServiceState {
  ref: ServiceRef;
  type: 'ClusterIP' | 'NodePort' | 'LoadBalancer';
  /** type LoadBalancer: its address (set in its status) and source ranges. */
  loadBalancerIP?: string;
  sourceRanges: string[];
  externalTrafficPolicy: 'Cluster' | 'Local';
  internalTrafficPolicy: 'Cluster' | 'Local';
  /** ClientIP affinity's timeout in seconds; undefined without affinity. */
  affinitySeconds?: number;
  ports: Port[];
  /** The pods whose endpoints are ready (the not-ready ones too while the Service publishes them). */
  ready: Set<string>;
  /** The pods that never pass their readiness probe. */
  unready: Set<string>;
  publishNotReadyAddresses: boolean;
  /** Its labels: some make kube-proxy ignore it. */
  labels: Record<string, string>;
  /** clusterIP None: kube-proxy writes nothing for it. */
  headless: boolean;
}

/**
 * Why kube-proxy's rules do not show when a Service change reached the pods' datapath on a cluster with this
 * CNI, or undefined when they do.
 */
function unwatchableReason(topology: TopologySpec, cni: RealCni): string | undefined {
  if (cni !== 'cilium') return undefined;
  const cilium = ciliumSettings(topology);
  if (cilium.kubeProxyReplacement)
    return 'Cilium replaces kube-proxy on this cluster (startOrder has no kube-proxy), so no node has kube-proxy rules that show when a Service or endpoint change took effect';
  if (cilium.socketLB)
    return "Cilium's socket LB translates Services inside the pods, so kube-proxy's rules do not show when a Service or endpoint change reached it";
  return undefined;
}

export interface ServiceChangesInput {
  /** The provider's name, for refusals. */
  provider: string;
  api: KubeApi;
  topology: TopologySpec;
  /** What the cluster's namespaces are prefixed with ('' on a cluster of the run's own). */
  prefix: string;
  /** Scenario node name to its target. */
  nodes: ReadonlyMap<string, Target>;
  podIP(pod: string): string;
  /** The nodes' kubelet version: kube-proxy's release, whose layout says whether internalTrafficPolicy is honoured. */
  kubeletVersion?: string;
  cni: RealCni;
  signal: AbortSignal;
}

export class ServiceChanges {
  private readonly services = new Map<string, ServiceState>();
  /** Why the steps cannot be waited on here (they are refused), or undefined. */
  private readonly unwatchable: string | undefined;

  constructor(private readonly input: ServiceChangesInput) {
    this.unwatchable = unwatchableReason(input.topology, input.cni);
    for (const svc of input.topology.services)
      this.services.set(svc.name, {
        ref: { namespace: clusterNamespace(input.prefix, svc.namespace), name: svc.name },
        type: svc.type,
        loadBalancerIP: svc.loadBalancerIP,
        sourceRanges: svc.loadBalancerSourceRanges ?? [],
        externalTrafficPolicy: svc.externalTrafficPolicy,
        internalTrafficPolicy: svc.internalTrafficPolicy,
        affinitySeconds:
          svc.sessionAffinity === 'ClientIP'
            ? (svc.sessionAffinityConfig?.clientIP.timeoutSeconds ?? DEFAULT_AFFINITY_SECONDS)
            : undefined,
        ports: svc.ports,
        ready: new Set(svc.endpoints.filter((e) => e.ready || svc.publishNotReadyAddresses).map((e) => e.pod)),
        unready: new Set(svc.endpoints.filter((e) => !e.ready).map((e) => e.pod)),
        publishNotReadyAddresses: svc.publishNotReadyAddresses,
        labels: { ...svc.labels },
        headless: svc.clusterIP === 'None',
      });
  }

  perform(action: EndpointAction | ServiceAction): Promise<void> {
    return action.kind === 'endpoint' ? this.changeEndpoint(action) : this.changeService(action);
  }

  /**
   * Pods Ready is not kube-proxy synced: the EndpointSlices reach each kube-proxy a moment later. Waits until
   * every node's rules DNAT to every ready endpoint of every Service (the state the scenario's baseline starts from).
   */
  async waitEndpointsSynced(): Promise<void> {
    // without kube-proxy there are no rules to wait for; beside Cilium's socket LB, kube-proxy's rules still are
    if (this.input.cni === 'cilium' && ciliumSettings(this.input.topology).kubeProxyReplacement) return;
    const states = [...this.services.values()].filter((s) => !s.headless && this.proxied(s));
    await this.wait('kube-proxy writing every endpoint of every Service', (rules, node) =>
      states.every(
        (s) =>
          [...s.ready]
            .filter((pod) => this.visible(s, pod, node))
            .every((pod) => s.ports.every((p) => this.shows(rules, s, p, pod))) &&
          // a load balancer's address is written once its status reaches kube-proxy
          (!s.loadBalancerIP ||
            s.ready.size === 0 ||
            s.ports.every((p) => loadBalancerRules(rules, s.ref, p, s.loadBalancerIP!).length > 0)),
      ),
    );
  }

  private service(name: string): ServiceState {
    const svc = this.services.get(name);
    if (!svc) throw new HarnessError('LAB_FAILED', `no service ${name} in this cluster`);
    if (this.unwatchable)
      throw new HarnessError(
        'UNSUPPORTED',
        `${this.input.provider} cannot wait for a change of service ${name}: ${this.unwatchable}`,
        'run it with --provider netns, or with kube-proxy in startOrder and cilium.socketLB off',
      );
    return svc;
  }

  /** An endpoint added or removed is the pod's label that the Service selects on; the EndpointSlice controller and kube-proxy do the rest. */
  private async changeEndpoint(a: EndpointAction): Promise<void> {
    const svc = this.service(a.service);
    if (a.op === 'set' || a.ready === false || a.terminating)
      throw new HarnessError(
        'UNSUPPORTED',
        `endpoint ${a.op}${a.ready === false ? ' ready=false' : ''}${a.terminating ? ' terminating' : ''}: ${this.input.provider} changes endpoints by the pod's label only (no readiness or termination by hand)`,
        'run it with --provider netns',
      );
    const ip = this.input.podIP(a.pod);
    const namespace = clusterNamespace(this.input.prefix, podNamespaces(this.input.topology).get(a.pod) ?? 'default');
    await this.input.api.patchPod(namespace, a.pod, {
      metadata: { labels: { [endpointLabel(a.service)]: a.op === 'add' ? 'true' : null } },
    });
    if (a.op === 'add') svc.ready.add(a.pod);
    else svc.ready.delete(a.pod);
    await this.wait(
      `kube-proxy ${a.op === 'add' ? 'writing' : 'removing'} ${svc.ref.namespace}/${svc.ref.name}'s endpoint ${ip} (pod ${a.pod})`,
      (rules, node) =>
        a.op === 'add'
          ? !this.proxied(svc) ||
            !this.visible(svc, a.pod, node) ||
            svc.ports.every((p) => this.shows(rules, svc, p, a.pod))
          : svc.ports.every((p) => ![...clusterIPEndpoints(rules, svc.ref, p)].some((e) => e.startsWith(`${ip}:`))),
    );
  }

  /**
   * A pod deleted through the API, waited on until the kubelet has stopped it; the EndpointSlice controller takes
   * it out of its Services, and the step waits until no node's rules DNAT to it any more.
   */
  async deletePod(pod: string): Promise<void> {
    const backed = [...this.services.entries()]
      .filter(([, s]) => s.ready.has(pod) || s.unready.has(pod))
      .map(([name]) => this.service(name));
    const ip = this.input.podIP(pod);
    const namespace = clusterNamespace(this.input.prefix, podNamespaces(this.input.topology).get(pod) ?? 'default');
    await this.input.api.deletePod(namespace, pod, 60_000);
    for (const svc of backed) {
      svc.ready.delete(pod);
      svc.unready.delete(pod);
    }
    if (backed.length === 0) return;
    await this.wait(`kube-proxy removing deleted pod ${pod}'s endpoint ${ip}`, (rules) =>
      backed.every((svc) =>
        svc.ports.every((p) => ![...clusterIPEndpoints(rules, svc.ref, p)].some((e) => e.startsWith(`${ip}:`))),
      ),
    );
  }

  /**
   * A Service's type, ports, nodePorts, traffic policies or session affinity patched, then waits for every node's
   * rules to show it. A merge patch replaces the port list whole (a strategic one would merge two protocols on
   * one port number into one entry).
   */
  private async changeService(a: ServiceAction): Promise<void> {
    const svc = this.service(a.name);
    const unknown = Object.keys(a).filter((k) => !SERVICE_FIELDS.has(k));
    if (unknown.length > 0)
      throw new HarnessError(
        'UNSUPPORTED',
        `${this.input.provider} cannot change a Service's ${unknown.join(', ')}`,
        'run it with --provider netns',
      );
    if (a.internalTrafficPolicy !== undefined && !this.layout().internalTrafficPolicy)
      throw new HarnessError(
        'UNSUPPORTED',
        `internalTrafficPolicy is honoured from Kubernetes v1.22 on; this cluster runs ${this.input.kubeletVersion}`,
        'run it with --provider netns',
      );
    const spec: Record<string, unknown> = {};
    if (a.type) spec.type = a.type;
    if (a.publishNotReadyAddresses !== undefined) spec.publishNotReadyAddresses = a.publishNotReadyAddresses;
    if (a.externalTrafficPolicy) spec.externalTrafficPolicy = a.externalTrafficPolicy;
    if (a.internalTrafficPolicy) spec.internalTrafficPolicy = a.internalTrafficPolicy;
    const type = a.type ?? svc.type;
    const before = svc.ports;
    // a ClusterIP Service has no nodePorts; one made a NodePort again gets new ones unless the step names them
    const ports = (a.ports ?? before).map((p, i): Port => {
      const { nodePort: _previous, ...rest } = p;
      const nodePort = a.nodePorts?.[i] ?? p.nodePort;
      return nodePort && type !== 'ClusterIP' ? { ...rest, nodePort } : rest;
    });
    if (a.ports || a.nodePorts)
      spec.ports = ports.map((p) => ({
        name: p.name,
        port: p.port,
        targetPort: p.targetPort,
        protocol: p.protocol,
        ...(p.nodePort ? { nodePort: p.nodePort } : {}),
      }));
    const affinity = a.sessionAffinity !== undefined || a.sessionAffinityConfig !== undefined;
    // ClientIP without a config gets the API server's default timeout; a config alone changes the timeout
    const affinitySeconds = !affinity
      ? svc.affinitySeconds
      : a.sessionAffinity === 'None'
        ? undefined
        : (a.sessionAffinityConfig?.clientIP.timeoutSeconds ?? DEFAULT_AFFINITY_SECONDS);
    if (a.loadBalancerSourceRanges !== undefined) {
      if (svc.type !== 'LoadBalancer')
        throw new HarnessError('STEP_FAILED', `service ${a.name}: loadBalancerSourceRanges needs type LoadBalancer`);
      spec.loadBalancerSourceRanges = a.loadBalancerSourceRanges;
    }
    if (a.sessionAffinity) spec.sessionAffinity = a.sessionAffinity;
    if (affinity)
      spec.sessionAffinityConfig =
        affinitySeconds === undefined ? null : { clientIP: { timeoutSeconds: affinitySeconds } };
    await this.input.api.patchService(svc.ref.namespace, svc.ref.name, {
      ...(a.labels ? { metadata: { labels: a.labels } } : {}),
      spec,
    });
    for (const [key, value] of Object.entries(a.labels ?? {}))
      if (value === null) delete svc.labels[key];
      else svc.labels[key] = value;

    svc.type = type;
    if (a.loadBalancerSourceRanges !== undefined) svc.sourceRanges = a.loadBalancerSourceRanges ?? [];
    if (a.publishNotReadyAddresses !== undefined) {
      svc.publishNotReadyAddresses = a.publishNotReadyAddresses;
      for (const pod of svc.unready)
        if (a.publishNotReadyAddresses) svc.ready.add(pod);
        else svc.ready.delete(pod);
    }
    svc.externalTrafficPolicy = a.externalTrafficPolicy ?? svc.externalTrafficPolicy;
    svc.internalTrafficPolicy = a.internalTrafficPolicy ?? svc.internalTrafficPolicy;
    svc.affinitySeconds = affinitySeconds;
    svc.ports = ports;
    const gone = before.filter(
      (p) => !ports.some((q) => q.name === p.name && q.port === p.port && q.protocol === p.protocol),
    );
    await this.wait(`kube-proxy writing ${svc.ref.namespace}/${svc.ref.name}'s new spec`, (rules, node) =>
      this.specShown(a, svc, gone, rules, node),
    );
  }

  /** Whether `node`'s rules show every field the step changed (`gone`: the ports it removed). */
  private specShown(a: ServiceAction, svc: ServiceState, gone: Port[], rules: NodeRules, node: string): boolean {
    const { ref, ports } = svc;
    const nodePort = svc.type !== 'ClusterIP';
    const written = (found: string[]) => found.length > 0;
    // a Service kube-proxy ignores has no rule at all; one it handles again has its ClusterIP rules back
    if (!this.proxied(svc)) return ![...rules.nat, ...rules.filter].some((r) => mentions(r, ref));
    return [
      // taken back by kube-proxy: its ClusterIP rules, and the endpoints its slices list again (they carry the
      // Service's labels, and are let in a moment after it; a REJECT meanwhile is no sign of them)
      !a.labels ||
        (ports.every((p) => written(clusterIPRules(rules, ref, p))) &&
          [...svc.ready]
            .filter((pod) => this.visible(svc, pod, node))
            .every((pod) => ports.every((p) => this.shows(rules, svc, p, pod)))),
      // the not-ready pods' endpoints come and go with publishNotReadyAddresses
      a.publishNotReadyAddresses === undefined ||
        [...svc.unready]
          .filter((pod) => this.visible(svc, pod, node))
          .every((pod) =>
            ports.every(
              (p) =>
                targetPortOf(p, this.podOf(pod)) === undefined ||
                this.shows(rules, svc, p, pod) === a.publishNotReadyAddresses,
            ),
          ),
      !(a.type || a.nodePorts || a.ports) ||
        ports.every((p) => written(nodePortRules(rules, ref, p, nodePort ? p.nodePort : undefined)) === nodePort),
      !a.ports ||
        (ports.every((p) => written(clusterIPRules(rules, ref, p))) &&
          !gone.some((p) => written(clusterIPRules(rules, ref, p)))),
      // the external chains are written only while the Service has an endpoint
      !a.externalTrafficPolicy ||
        !nodePort ||
        svc.ready.size === 0 ||
        showsLocalExternalPolicy(rules, ref) === (svc.externalTrafficPolicy === 'Local'),
      // affinity is written on the chains to endpoints, so only on a node that leads to some
      !(a.sessionAffinity || a.sessionAffinityConfig) ||
        ![...svc.ready].some((pod) => this.visible(svc, pod, node)) ||
        ports.every((p) => showsAffinity(rules, ref, p, svc.affinitySeconds) === (svc.affinitySeconds !== undefined)),
      !a.internalTrafficPolicy || ports.every((p) => this.policyShown(rules, svc, p, node)),
      // the firewall chain is written only while the Service has an endpoint
      a.loadBalancerSourceRanges === undefined || svc.ready.size === 0 || this.rangesShown(rules, svc),
    ].every(Boolean);
  }

  /** Exactly the Service's source ranges in its firewall chain (the allowFromNode rule's load balancer address aside). */
  private rangesShown(rules: NodeRules, svc: ServiceState): boolean {
    const shown = firewallRanges(rules, svc.ref);
    if (svc.loadBalancerIP) shown.delete(`${svc.loadBalancerIP}/32`);
    return shown.size === svc.sourceRanges.length && svc.sourceRanges.every((r) => shown.has(r));
  }

  /** internalTrafficPolicy on one node: Local reaches this node's ready endpoints and no other, Cluster every ready one. */
  private policyShown(rules: NodeRules, svc: ServiceState, port: Port, node: string): boolean {
    const shown = clusterIPEndpoints(rules, svc.ref, port);
    const endpoint = (pod: string) => `${this.input.podIP(pod)}:${targetPortOf(port, this.podOf(pod))}`;
    const pods = [...svc.ready].filter((pod) => targetPortOf(port, this.podOf(pod)) !== undefined);
    const local = pods.filter((pod) => this.nodeOf(pod) === node).map(endpoint);
    if (svc.internalTrafficPolicy === 'Cluster') return pods.every((pod) => shown.has(endpoint(pod)));
    return shown.size === local.length && local.every((e) => shown.has(e));
  }

  /** Whether kube-proxy handles the Service at all: some labels leave it to another proxy. */
  private proxied(svc: ServiceState): boolean {
    return Object.keys(svc.labels).length === 0 || proxies(this.layout(), svc.labels);
  }

  /** Whether `node`'s ClusterIP rules lead to the pod's endpoint: with internalTrafficPolicy Local honoured, only its own node's do. */
  private visible(svc: ServiceState, pod: string, node: string): boolean {
    return svc.internalTrafficPolicy !== 'Local' || !this.layout().internalTrafficPolicy || this.nodeOf(pod) === node;
  }

  private nodeOf(pod: string): string | undefined {
    return this.podOf(pod)?.node;
  }

  private podOf(pod: string) {
    return this.input.topology.pods.find((p) => p.name === pod);
  }

  /** Whether the rules lead the Service port to the pod's endpoint; a pod without the port (a name it lacks) needs none. */
  private shows(rules: NodeRules, svc: ServiceState, port: Port, pod: string): boolean {
    const target = targetPortOf(port, this.podOf(pod));
    return target === undefined || clusterIPEndpoints(rules, svc.ref, port).has(`${this.input.podIP(pod)}:${target}`);
  }

  /** kube-proxy's layout from the nodes' release (kubelet and kube-proxy come from one release on these clusters). */
  private layout() {
    const minor = /^v1\.(\d+)\./.exec(this.input.kubeletVersion ?? '')?.[1];
    if (!minor)
      throw new HarnessError(
        'LAB_FAILED',
        `the nodes report kubelet version ${this.input.kubeletVersion ?? '(none)'}, so kube-proxy's release is unknown`,
      );
    return kubeProxyLayout(`1.${minor}`);
  }

  private wait(what: string, done: (rules: NodeRules, node: string) => boolean): Promise<void> {
    return waitRules(this.input.nodes, what, done, this.input.signal);
  }
}
