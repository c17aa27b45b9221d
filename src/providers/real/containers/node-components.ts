// Starting a real cluster's node components by hand and rebooting a node, through the API and the node's
// container: a component is its DaemonSet's pod on the node, so starting it is deleting that pod and waiting
// for the replacement the DaemonSet controller makes; a reboot restarts the node's container (its iptables
// rules and conntrack table are gone with its network namespace) and brings the components up in the
// scenario's order by holding the later ones off the node (component-daemonsets.ts) until the earlier are Ready.
import { HarnessError } from '../../../model/errors.ts';
import type { NodeComponentName } from '../../../model/lab-action.ts';
import type { Target } from '../../../contract/provider.ts';
import { COMPONENT_DAEMONSETS, holdLabel } from './component-daemonsets.ts';
import type { KubeCli } from '../common/kube-cli.ts';
import { standInRefusal } from '../common/kube-proxy-stand-in.ts';
import { waitKubeProxySynced } from './kube-proxy-synced.ts';
import { nodePods, readyAnew, runningAnew, waitNodePods, type NodePod, type PodQuery } from './node-pods.ts';

const READY_TIMEOUT_MS = 180_000;
const BE_LIBERAL = 'net.netfilter.nf_conntrack_tcp_be_liberal';

export interface NodeComponentsInput {
  kubectl: KubeCli;
  /** Scenario node name to the node's target and its Kubernetes node name. */
  nodes: ReadonlyMap<string, { target: Target; k8sName: string }>;
  /** The cluster's Kubernetes release (the nodes' kubelet version): the kube-proxy that runs. */
  k8sVersion: string;
  /** The scenario's kube-proxy profile: the release a `start` without a version stands for. */
  kubeProxyProfile: string;
  /** The scenario has Services (kube-proxy-stand-in.ts). */
  services: boolean;
  /** The components the cluster runs, in the scenario's start order. */
  startOrder: readonly NodeComponentName[];
  /** Those whose DaemonSet has the hold affinity (all but the first can be held off a rebooting node). */
  holdable: ReadonlySet<NodeComponentName>;
  /** Restarts the node's machine (`docker restart <container>`): its network namespace is made anew. */
  restartNode(k8sName: string): Promise<void>;
  /** The sysctls each node is given at provisioning (scenario node name): set again after its restart. */
  bootSysctls: ReadonlyMap<string, Readonly<Record<string, string | number>>>;
  /** Selects the run's own pods (the scenario's workload). */
  workloadSelector: string;
  /** Called with the workload pods on a rebooted node once they are Ready again (their addresses may be new). */
  onWorkloadBack(pods: NodePod[]): Promise<void>;
  signal: AbortSignal;
  log(line: string): void;
  /** How long a component may take to be Ready (default 180 s; tests make it short). */
  readyTimeoutMs?: number;
}

export class NodeComponents {
  private readonly readyTimeoutMs: number;

  constructor(private readonly input: NodeComponentsInput) {
    this.readyTimeoutMs = input.readyTimeoutMs ?? READY_TIMEOUT_MS;
  }

  /** Refused (UNSUPPORTED, the variant is skipped) before anything changes; then the pod is replaced. */
  async start(node: string, component: NodeComponentName, version?: string): Promise<void> {
    const { target, k8sName } = this.node(node);
    this.assertRuns(component);
    if (version !== undefined && component !== 'kube-proxy')
      throw new HarnessError('UNSUPPORTED', `only kube-proxy has a version to start; ${component} ${version} asked`);
    const startedAt = Date.now();
    if (component === 'kube-proxy') await this.assertStandsIn(target, version ?? this.input.kubeProxyProfile);
    const query = this.componentQuery(k8sName, component);
    const before = await nodePods(this.input.kubectl, query, this.input.signal);
    if (before.length === 0)
      throw new HarnessError('LAB_FAILED', `no ${component} pod on node ${k8sName} to start anew`);
    this.input.log(`start ${component} on ${k8sName}: delete its pod ${before.map((p) => p.name).join(', ')}`);
    const ds = COMPONENT_DAEMONSETS[component];
    await this.input.kubectl.kubectl(
      ['-n', ds.namespace, 'delete', 'pod', ...before.map((p) => p.name), '--wait=true', '--timeout=120s'],
      { timeoutMs: 130_000, signal: this.input.signal },
    );
    await this.waitStarted(node, component, before, startedAt);
  }

  /**
   * `docker restart` of the node's container, with every component after the first in `order` held off the
   * node until the ones before it are Ready there; then the node and the workload on it are Ready again. A
   * failure leaves no hold behind: the labels are removed whatever happened.
   */
  async reboot(node: string, order: readonly NodeComponentName[] = this.input.startOrder): Promise<void> {
    const { k8sName } = this.node(node);
    for (const c of order) this.assertRuns(c);
    const [, ...later] = order;
    const notHoldable = later.filter((c) => !this.input.holdable.has(c));
    if (notHoldable.length > 0)
      throw new HarnessError(
        'UNSUPPORTED',
        `a reboot that starts ${notHoldable.join(', ')} after ${order[0]} needs ${notHoldable.join(', ')} held off the node, and this cluster's ${notHoldable.join(', ')} DaemonSet has no hold affinity`,
      );
    const { kubectl, signal } = this.input;
    const before = new Map<NodeComponentName, NodePod[]>();
    for (const c of order) before.set(c, await nodePods(kubectl, this.componentQuery(k8sName, c), signal));
    const workloadQuery: PodQuery = { node: k8sName, namespace: 'all', selector: this.input.workloadSelector };
    const workload = await nodePods(kubectl, workloadQuery, signal);
    const held = new Set<NodeComponentName>();
    try {
      if (later.length > 0) {
        await this.label(
          k8sName,
          later.map((c) => `${holdLabel(c)}=true`),
        );
        for (const c of later) held.add(c);
        for (const c of later)
          await waitNodePods({
            kubectl,
            query: this.componentQuery(k8sName, c),
            what: `${c} held off node ${k8sName}`,
            done: (pods) => pods.length === 0,
            timeoutMs: this.readyTimeoutMs,
            signal,
          });
      }
      this.input.log(`reboot ${k8sName}: docker restart, then ${order.join(', ')}`);
      const restartedAt = Date.now();
      await this.input.restartNode(k8sName);
      // the lab's reboot keeps the node's settings; a new network namespace has the kernel's defaults
      for (const [key, value] of Object.entries(this.input.bootSysctls.get(node) ?? {}))
        await this.node(node).target.exec(['sysctl', '-w', `${key}=${value}`], { signal });
      for (const c of order) {
        if (held.has(c)) {
          await this.label(k8sName, [`${holdLabel(c)}-`]);
          held.delete(c);
        }
        await this.waitStarted(node, c, before.get(c)!, restartedAt);
      }
      await kubectl.kubectl(['wait', '--for=condition=Ready', `node/${k8sName}`, '--timeout=180s'], {
        timeoutMs: 190_000,
        signal,
      });
      if (workload.length > 0) {
        const back = await waitNodePods({
          kubectl,
          query: workloadQuery,
          what: `the scenario's pods on node ${k8sName} running again`,
          done: runningAnew(workload),
          timeoutMs: this.readyTimeoutMs,
          signal,
        });
        await this.input.onWorkloadBack(back);
      }
    } finally {
      if (held.size > 0)
        await this.label(
          k8sName,
          [...held].map((c) => `${holdLabel(c)}-`),
        ).catch((e: Error) => this.input.log(`removing the hold labels of ${k8sName}: ${e.message}`));
    }
  }

  private node(node: string) {
    const found = this.input.nodes.get(node);
    if (!found) throw new HarnessError('LAB_FAILED', `no node ${node} in this cluster`);
    return found;
  }

  private assertRuns(component: NodeComponentName): void {
    if (!this.input.startOrder.includes(component))
      throw new HarnessError(
        'UNSUPPORTED',
        `this cluster runs no ${component} (its components: ${this.input.startOrder.join(', ') || 'none'})`,
      );
  }

  /** The cluster's kube-proxy starts in place of release `asked` only where it writes the same rules. */
  private async assertStandsIn(target: Target, asked: string): Promise<void> {
    const liberal = await target.exec(['sysctl', '-n', BE_LIBERAL], { signal: this.input.signal });
    const refusal = standInRefusal(asked, this.input.k8sVersion, {
      beLiberal: liberal.stdout.trim() !== '0',
      services: this.input.services,
    });
    if (refusal)
      throw new HarnessError(
        'UNSUPPORTED',
        `the cluster's kube-proxy cannot start as ${asked} on ${target.ref}: ${refusal}`,
        'run it with --provider netns, or on a cluster of that release (NETREPRO_K8S_VERSION)',
      );
  }

  private componentQuery(k8sName: string, component: NodeComponentName): PodQuery {
    const ds = COMPONENT_DAEMONSETS[component];
    return { node: k8sName, namespace: ds.namespace, selector: ds.selector };
  }

  /** The component's pod on the node is Ready anew (new containers or a new pod); kube-proxy has synced since. */
  private async waitStarted(
    node: string,
    component: NodeComponentName,
    before: readonly NodePod[],
    sinceMs: number,
  ): Promise<void> {
    const { target, k8sName } = this.node(node);
    await waitNodePods({
      kubectl: this.input.kubectl,
      query: this.componentQuery(k8sName, component),
      what: `${component} on node ${k8sName} Ready again`,
      done: readyAnew(before),
      timeoutMs: this.readyTimeoutMs,
      signal: this.input.signal,
    });
    if (component === 'kube-proxy') await waitKubeProxySynced(target, sinceMs, this.input.signal);
  }

  private label(k8sName: string, labels: string[]) {
    return this.input.kubectl.kubectl(['label', 'node', k8sName, '--overwrite', ...labels], {
      timeoutMs: 30_000,
      signal: this.input.signal,
    });
  }
}
