// Test support for the real-cluster providers: the fake CLIs first (and alone) on PATH, their
// recorded argv, and a KubeApi that records objects instead of talking to a server.
import { afterEach } from 'vitest';
import type { V1ConfigMap, V1Namespace, V1Pod, V1Service } from '@kubernetes/client-node';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ClusterNode, KubeApi, PodRef } from '../../src/providers/real/common/kube-api.ts';
import type { KubeAccess } from '../../src/providers/real/common/kube-cli.ts';
import type { RunContext } from '../../src/contract/provider.ts';
import { Topology, type TopologySpec } from '../../src/model/scenario-schema.ts';
import { endpointSlices, serviceObject } from '../../src/contract/kube-objects.ts';
import { kubeProxyLayout } from '../../src/dataplane/kube-proxy-layout.ts';
import { kubeProxyRules, restorePayload } from '../../src/dataplane/kube-proxy-rules.ts';

export const FAKES = fileURLToPath(new URL('./fakes', import.meta.url));

export interface Recorded {
  tool: string;
  argv: string[];
  stdin?: string;
  config?: string;
}

export interface Reply {
  tool: string;
  args: string[];
  stdout?: string;
  stderr?: string;
  exitCode?: number;
  /** Answers the first matching call only (a node's rules before kube-proxy synced, say). */
  once?: boolean;
}

/** Puts the fakes alone on PATH for the duration of a test; returns the recorder. */
export function fakeTools(replies: Reply[] = [], pathDir = FAKES) {
  const dir = mkdtempSync(join(tmpdir(), 'netrepro-fakes-'));
  const log = join(dir, 'calls');
  mkdirSync(log);
  // one directory per reply, in order, in the plain files fake-cli.sh reads with shell builtins (no JSON
  // parser in sh): the leading words one per line (a reply's words hold no newline)
  const words = (argv: readonly string[]) => argv.map((a) => `${a}\n`).join('');
  replies.forEach((r, i) => {
    const at = join(dir, 'replies', String(i).padStart(4, '0'));
    mkdirSync(at, { recursive: true });
    for (const [name, content] of Object.entries({
      tool: r.tool,
      args: words(r.args),
      stdout: r.stdout ?? '',
      stderr: r.stderr ?? '',
      code: String(r.exitCode ?? 0),
      ...(r.once ? { once: '' } : {}),
    }))
      writeFileSync(join(at, name), content);
  });
  const saved = {
    PATH: process.env.PATH,
    LOG: process.env.NETREPRO_FAKE_LOG,
    REPLIES: process.env.NETREPRO_FAKE_REPLIES,
    KIND_ENGINE: process.env.NETREPRO_KIND_ENGINE,
  };
  process.env.PATH = pathDir;
  // the fakes stand for the host's Docker, also where a kind build on this machine would pick its own engine
  process.env.NETREPRO_KIND_ENGINE = 'host';
  process.env.NETREPRO_FAKE_LOG = log;
  process.env.NETREPRO_FAKE_REPLIES = join(dir, 'replies');
  const calls = (): Recorded[] =>
    (existsSync(join(log, 'order')) ? readFileSync(join(log, 'order'), 'utf8').split('\n').slice(0, -1) : []).map(
      (name) => {
        const read = (what: string) =>
          existsSync(join(log, `${name}.${what}`)) ? readFileSync(join(log, `${name}.${what}`), 'utf8') : undefined;
        const call: Recorded = { tool: read('tool')!, argv: read('argv')!.split('\0').slice(0, -1) };
        const stdin = read('stdin');
        const config = read('config');
        if (stdin !== undefined) call.stdin = stdin;
        if (config !== undefined) call.config = config;
        return call;
      },
    );
  return {
    dir,
    calls,
    /** Changes what reply `i` prints: output that names what a run creates, known only once it runs. */
    reply: (i: number, stdout: string) =>
      writeFileSync(join(dir, 'replies', String(i).padStart(4, '0'), 'stdout'), stdout),
    /** `tool arg arg ...` per call, for exact sequence assertions. */
    lines: (): string[] => calls().map((c) => [c.tool, ...c.argv].join(' ')),
    restore() {
      const put = (k: string, v: string | undefined) =>
        v === undefined ? delete process.env[k] : (process.env[k] = v);
      put('PATH', saved.PATH);
      put('NETREPRO_FAKE_LOG', saved.LOG);
      put('NETREPRO_FAKE_REPLIES', saved.REPLIES);
      put('NETREPRO_KIND_ENGINE', saved.KIND_ENGINE);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RecordingApi extends KubeApi {
  accesses: KubeAccess[];
  namespaces: V1Namespace[];
  configMaps: V1ConfigMap[];
  services: V1Service[];
  pods: V1Pod[];
  execs: { pod: PodRef; argv: readonly string[] }[];
  /** JSON merge patches, in order. */
  patches: { kind: 'Pod' | 'Service' | 'ServiceStatus'; namespace: string; name: string; patch: object }[];
  deleted: string[];
}

/** A KubeApi with the given nodes; Services get 10.96.100.N, pods 10.244.9.N (in creation order), every exec succeeds. */
export function recordingKubeApi(nodes: ClusterNode[]): {
  api: RecordingApi;
  factory: (access: KubeAccess) => KubeApi;
} {
  let svc = 0;
  let pod = 0;
  const api: RecordingApi = {
    accesses: [],
    namespaces: [],
    configMaps: [],
    services: [],
    pods: [],
    execs: [],
    patches: [],
    deleted: [],
    listNodes: async () => nodes,
    createNamespace: async (b) => void api.namespaces.push(b),
    createConfigMap: async (b) => void api.configMaps.push(b),
    createService: async (b) => (api.services.push(b), { ...b, spec: { ...b.spec, clusterIP: `10.96.100.${++svc}` } }),
    createPod: async (b) => void api.pods.push(b),
    patchPod: async (namespace, name, patch) => void api.patches.push({ kind: 'Pod', namespace, name, patch }),
    patchService: async (namespace, name, patch) => void api.patches.push({ kind: 'Service', namespace, name, patch }),
    patchServiceStatus: async (namespace, name, patch) =>
      void api.patches.push({ kind: 'ServiceStatus', namespace, name, patch }),
    waitPodReady: async (namespace, name) => ({
      metadata: { name, namespace },
      status: { podIP: `10.244.9.${++pod}` },
    }),
    waitPodAddressed: async () => `10.244.8.${++pod}`,
    logs: async (p) => `ready ${p.container}\n`,
    exec: async (p, argv) => (
      api.execs.push({ pod: p, argv }), { argv, exitCode: 0, stdout: '', stderr: '', timedOut: false, durationMs: 0 }
    ),
    spawn: () => {
      throw new Error('not used');
    },
    deleteNamespace: async (name) => void api.deleted.push(name),
    deletePod: async (namespace, name) => void api.deleted.push(`pod ${namespace}/${name}`),
  };
  return { api, factory: (access) => (api.accesses.push(access), api) };
}

export function runContext(runId = 'abc123'): RunContext & { lines: string[] } {
  const lines: string[] = [];
  return { runId, prefix: `nr-${runId}-`, signal: new AbortController().signal, log: (l) => lines.push(l), lines };
}

/** Scenario topology through the real schema (defaults applied); `cni` is set after parsing, as flannel is no scenario shape. */
export function topology(input: {
  cni: string;
  nodes: number;
  cilium?: { bpfMasquerade?: boolean; socketLB?: boolean };
  startOrder?: ('kube-proxy' | 'cilium')[];
}): TopologySpec {
  const names = ['node-a', 'node-b', 'node-c'].slice(0, input.nodes);
  const t = Topology.parse({
    cni: 'bridge',
    ...(input.cilium ? { cilium: input.cilium } : {}),
    ...(input.startOrder ? { startOrder: input.startOrder } : {}),
    nodes: names.map((name, i) => ({ name, podCIDR: `10.244.${i + 1}.0/24` })),
    pods: [
      { name: 'client', node: names[0] },
      { name: 'web', node: names.at(-1), serve: [{ http: 8080 }] },
      { name: 'coredns', node: names[0], serve: [{ dns: 53 }] },
    ],
    services: [
      {
        name: 'web',
        clusterIP: '10.96.0.20',
        ports: [{ name: 'http', port: 80, targetPort: 8080 }],
        endpoints: ['web'],
      },
      {
        name: 'kube-dns',
        namespace: 'kube-system',
        clusterIP: '10.96.0.10',
        ports: [{ name: 'dns', port: 53, targetPort: 53, protocol: 'UDP' }],
        endpoints: ['coredns'],
      },
    ],
  });
  return { ...t, cni: input.cni } as TopologySpec;
}

/**
 * A node's `iptables-save` (nat and filter) as kube-proxy `version` writes it for the topology's Services on a
 * cluster provisioned with the recording API: the lab's rule writer (src/dataplane/kube-proxy-rules.ts) over
 * the Services with prefixed namespaces, ClusterIPs 10.96.100.N and pod IPs 10.244.9.N in topology order.
 */
export function kubeProxySave(t: TopologySpec, node: string, { version = '1.35', prefix = 'nr-abc123-' } = {}): string {
  const placements = new Map(t.pods.map((p, i) => [p.name, { ip: recordedPodIP(t, p.name), node: p.node, i }]));
  const services = t.services.map((svc, i) => ({
    ...svc,
    namespace: `${prefix}${svc.namespace}`,
    clusterIP: `10.96.100.${i + 1}`,
  }));
  const rules = kubeProxyRules({
    layout: kubeProxyLayout(version),
    services: services.map(serviceObject),
    slices: services.flatMap((svc) => endpointSlices(svc, placements)),
    clusterCIDR: t.clusterCIDR,
    masqueradeAll: false,
    nodeName: node,
    beLiberal: false,
    nfacctCounters: false,
  });
  return restorePayload(rules);
}

/** The address the recording API gives a pod of `t` (pods become ready in topology order). */
export const recordedPodIP = (t: TopologySpec, pod: string) =>
  `10.244.9.${t.pods.findIndex((p) => p.name === pod) + 1}`;

/**
 * Per test file, for the real providers' recorded-command tests: temporary work directories and fake CLIs,
 * removed after each test. `fakes` keys kubectl replies by what follows `--kubeconfig K --context CONTEXT`.
 */
export function recordedRun(context: string) {
  const cleanup: (() => void)[] = [];
  afterEach(() => {
    for (const undo of cleanup.splice(0)) undo();
  });
  const tools = (replies: Reply[]) => {
    const f = fakeTools(replies);
    cleanup.push(() => f.restore());
    return f;
  };
  return {
    tools,
    workDir(prefix = 'netrepro-work-'): string {
      const work = mkdtempSync(join(tmpdir(), prefix));
      cleanup.push(() => rmSync(work, { recursive: true, force: true }));
      return work;
    },
    fakes(
      kubeconfig: string,
      kubectl: { args: string[]; stdout?: string; exitCode?: number; once?: boolean }[],
      other: Reply[] = [],
    ) {
      return tools([
        ...kubectl.map((r) => ({
          tool: 'kubectl',
          ...r,
          args: ['--kubeconfig', kubeconfig, '--context', context, ...r.args],
        })),
        ...other,
      ]);
    },
  };
}
