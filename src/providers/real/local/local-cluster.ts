// A started `local` cluster: the real-cluster layer's RealCluster (pods through the API, teardown stack)
// plus what a cluster of namespaces on this host can also do: commands on the fabric and on hosts outside
// the cluster, the names of a node's fabric port and a pod's host-side veth, and Service and endpoint
// changes through the API, after which it waits until every node's real kube-proxy has written them.
import { HarnessError } from '../../../model/errors.ts';
import type { TopologySpec } from '../../../model/scenario-schema.ts';
import { runCommand, spawnCommand, type ExecOptions, type SpawnOptions } from '../../../contract/command.ts';
import { DEFAULT_AFFINITY_SECONDS, endpointLabel } from '../../../contract/kube-objects.ts';
import type { LabAction, RunContext, Target } from '../../../contract/provider.ts';
import { RealCluster } from '../real-cluster.ts';
import { podNamespaces } from '../workload-objects.ts';
import type { LocalApi } from './local-api.ts';

/** Commands in one of the run's network namespaces (the host's files, as the netns lab runs them). */
export class NamespaceTarget implements Target {
  constructor(
    readonly ref: string,
    private readonly netns: string,
  ) {}

  exec(argv: readonly string[], options?: ExecOptions) {
    return runCommand(argv, { ...options, enter: { net: `/run/netns/${this.netns}` } }, this.ref);
  }

  spawn(argv: readonly string[], options?: SpawnOptions) {
    return spawnCommand(argv, { ...options, enter: { net: `/run/netns/${this.netns}` } });
  }
}

const SYNC_TIMEOUT_MS = 30_000;

/** The service step's fields this provider sends to the API server; any other is refused, never dropped. */
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
]);

/** A rule whose comment names the Service, or one of its ports when `port` is given (`"ns/name:port"`, `"Balancing rule 0 for ns/name:port"`, `"ns/name:port has no ..."`). */
function mentions(line: string, svc: { namespace: string; name: string }, port?: string): boolean {
  return new RegExp(`[" ]${svc.namespace}/${svc.name}${port ? `:${port}` : '(:[^" ]*)?'}[" ]`).test(line);
}

export class LocalCluster extends RealCluster {
  /** Set once the cluster is up. */
  api?: LocalApi;
  topology?: TopologySpec;
  readonly hosts = new Map<string, Target>();
  /** Each Service's ports as its last `service` step set them (the topology's until then). */
  private readonly ports = new Map<string, TopologySpec['services'][number]['ports']>();
  readonly fabricPorts = new Map<string, string>();
  readonly veths = new Map<string, string>();
  fabric?: Target;
  private readonly signal: AbortSignal;

  constructor(nodeNames: readonly string[], run: RunContext, agentCommand: readonly string[]) {
    super(nodeNames, run, agentCommand);
    this.signal = run.signal;
  }

  override target(ref: string): Target {
    if (ref === 'fabric' && this.fabric) return this.fabric;
    if (ref.startsWith('host/')) {
      const host = this.hosts.get(ref.slice(5));
      if (!host) throw new HarnessError('LAB_FAILED', `no host ${ref.slice(5)} in this cluster`);
      return host;
    }
    return super.target(ref);
  }

  override path(ref: string): string {
    const [kind, name = ''] = ref.split('/');
    const found = kind === 'port' ? this.fabricPorts.get(name) : kind === 'veth' ? this.veths.get(name) : undefined;
    if (found) return found;
    return super.path(ref);
  }

  override async perform(action: LabAction): Promise<void> {
    if (action.kind === 'endpoint') return this.changeEndpoint(action);
    if (action.kind === 'service') return this.changeService(action);
    return super.perform(action);
  }

  private service(name: string) {
    const svc = this.topology?.services.find((s) => s.name === name);
    if (!svc || !this.api) throw new HarnessError('LAB_FAILED', `no service ${name} in this cluster`);
    return svc;
  }

  /** An endpoint added or removed is the pod's label that the Service selects on; the EndpointSlice controller and kube-proxy do the rest. */
  private async changeEndpoint(a: Extract<LabAction, { kind: 'endpoint' }>): Promise<void> {
    const svc = this.service(a.service);
    if (a.op === 'set' || a.ready === false || a.terminating) {
      throw new HarnessError(
        'UNSUPPORTED',
        `endpoint ${a.op}${a.ready === false ? ' ready=false' : ''}${a.terminating ? ' terminating' : ''}: the local cluster changes endpoints by the pod's label only (no readiness or termination by hand)`,
        'run it with --provider netns',
      );
    }
    const ip = this.address(`pod/${a.pod}`);
    const namespace = await this.podNamespace(a.pod);
    const labels = { [endpointLabel(svc.name)]: a.op === 'add' ? 'true' : null };
    await this.api!.core.patchNamespacedPod(
      { name: a.pod, namespace, body: { metadata: { labels } } },
      this.api!.mergePatch,
    );
    const dnat = (nat: string) =>
      nat.split('\n').some((l) => mentions(l, svc) && l.includes(`--to-destination ${ip}:`));
    await this.waitRules(
      `kube-proxy ${a.op === 'add' ? 'writing' : 'removing'} ${svc.namespace}/${svc.name}'s endpoint ${ip} (pod ${a.pod})`,
      ({ nat }) => dnat(nat) === (a.op === 'add'),
    );
  }

  /**
   * A Service's type, ports, nodePorts, externalTrafficPolicy or session affinity patched, then waits for every
   * node's rules to show it; internalTrafficPolicy does not exist before 1.21. A merge patch replaces the port list
   * whole (a strategic one would merge two protocols on one port number into one entry).
   */
  private async changeService(a: Extract<LabAction, { kind: 'service' }>): Promise<void> {
    const svc = this.service(a.name);
    const unknown = Object.keys(a).filter((k) => !SERVICE_FIELDS.has(k));
    if (unknown.length > 0)
      throw new HarnessError(
        'UNSUPPORTED',
        `the local cluster cannot change a Service's ${unknown.join(', ')}`,
        'run it with --provider netns',
      );
    if (a.internalTrafficPolicy !== undefined)
      throw new HarnessError(
        'UNSUPPORTED',
        'internalTrafficPolicy does not exist in Kubernetes v1.20',
        'run it with --provider netns',
      );
    const spec: Record<string, unknown> = {};
    if (a.type) spec.type = a.type;
    if (a.externalTrafficPolicy) spec.externalTrafficPolicy = a.externalTrafficPolicy;
    const before = this.ports.get(svc.name) ?? svc.ports;
    const ports = a.ports ?? before;
    if (a.ports || a.nodePorts)
      spec.ports = ports.map((p, i) => ({
        name: p.name,
        port: p.port,
        targetPort: p.targetPort,
        protocol: p.protocol,
        ...((a.nodePorts?.[i] ?? p.nodePort) ? { nodePort: a.nodePorts?.[i] ?? p.nodePort } : {}),
      }));
    if (a.sessionAffinity === 'None') Object.assign(spec, { sessionAffinity: 'None', sessionAffinityConfig: null });
    if (a.sessionAffinity === 'ClientIP')
      Object.assign(spec, {
        sessionAffinity: 'ClientIP',
        sessionAffinityConfig: {
          clientIP: { timeoutSeconds: a.sessionAffinityConfig?.clientIP.timeoutSeconds ?? DEFAULT_AFFINITY_SECONDS },
        },
      });
    this.ports.set(svc.name, ports);
    const gone = before.filter((p) => !ports.some((q) => q.name === p.name));
    const names = (p: { name?: string }) => (l: string) => mentions(l, svc, p.name);
    await this.api!.core.patchNamespacedService(
      { name: svc.name, namespace: svc.namespace, body: { spec } },
      this.api!.mergePatch,
    );
    await this.waitRules(`kube-proxy writing ${svc.namespace}/${svc.name}'s new spec`, ({ nat }) => {
      const lines = nat.split('\n').filter((l) => mentions(l, svc));
      if (
        a.externalTrafficPolicy &&
        lines.some((l) => l.startsWith('-A KUBE-XLB-')) !== (a.externalTrafficPolicy === 'Local')
      )
        return false;
      if (a.type === 'NodePort' && !lines.some((l) => l.startsWith('-A KUBE-NODEPORTS'))) return false;
      if (a.type === 'ClusterIP' && lines.some((l) => l.startsWith('-A KUBE-NODEPORTS'))) return false;
      if (a.sessionAffinity && lines.some((l) => l.includes(' -m recent ')) !== (a.sessionAffinity === 'ClientIP'))
        return false;
      if (a.ports && !ports.every((p) => lines.some(names(p)))) return false;
      return !gone.some((p) => lines.some(names(p)));
    });
  }

  /** Polls every node's rules (iptables-save) until `done` holds on all of them: kube-proxy synced the change. */
  private async waitRules(what: string, done: (rules: { nat: string; filter: string }) => boolean): Promise<void> {
    const deadline = Date.now() + SYNC_TIMEOUT_MS;
    const pending = new Set(this.nodes.keys());
    while (pending.size > 0) {
      for (const name of [...pending]) {
        const node = this.node(name);
        const [nat, filter] = await Promise.all([
          node.exec(['iptables-save', '-t', 'nat']),
          node.exec(['iptables-save', '-t', 'filter']),
        ]);
        if (done({ nat: nat.stdout, filter: filter.stdout })) pending.delete(name);
      }
      if (pending.size === 0) return;
      if (this.signal.aborted) throw new HarnessError('ABORTED', `aborted while waiting for ${what}`);
      if (Date.now() > deadline)
        throw new HarnessError(
          'LAB_FAILED',
          `${what}: not on node ${[...pending].join(', ')} within ${SYNC_TIMEOUT_MS} ms`,
        );
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  private async podNamespace(pod: string): Promise<string> {
    return podNamespaces(this.topology!).get(pod) ?? 'default';
  }

  /**
   * Pods Ready is not kube-proxy synced: the EndpointSlices reach each kube-proxy a moment later. Waits until
   * every node's rules DNAT to every ready endpoint of every Service (the state the scenario's baseline starts from).
   */
  async waitEndpointsSynced(topology: TopologySpec): Promise<void> {
    const wanted = topology.services.flatMap((svc) =>
      svc.endpoints.flatMap(({ pod, ready }) =>
        !ready
          ? []
          : svc.ports.map((p) => ({ svc, to: `--to-destination ${this.address(`pod/${pod}`)}:${p.targetPort}` })),
      ),
    );
    await this.waitRules('kube-proxy writing every endpoint of every Service', ({ nat }) => {
      const lines = nat.split('\n');
      return wanted.every(({ svc, to }) => lines.some((l) => mentions(l, svc) && l.includes(to)));
    });
  }

  /** Each pod's host-side veth (what `{veth/POD}` names): the node's interface whose index is the pod's eth0 peer. */
  async resolveVeths(topology: TopologySpec): Promise<void> {
    await Promise.all(
      topology.pods.map(async (pod) => {
        const peer = (await this.pod(pod.name).exec(['cat', '/sys/class/net/eth0/iflink'])).stdout.trim();
        const links = (await this.node(pod.node).exec(['ip', '-o', 'link', 'show'])).stdout;
        const name = new RegExp(`^${peer}: ([^:@]+)`, 'm').exec(links)?.[1];
        if (!name) throw new HarnessError('LAB_FAILED', `pod ${pod.name}: no interface ${peer} on node ${pod.node}`);
        this.veths.set(pod.name, name);
      }),
    );
  }
}
