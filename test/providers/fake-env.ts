// Test support for the real-cluster providers: the fake CLIs first (and alone) on PATH, their
// recorded argv, and a KubeApi that records objects instead of talking to a server.
import type { V1ConfigMap, V1Namespace, V1Pod, V1Service } from '@kubernetes/client-node';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ClusterNode, KubeApi, PodRef } from '../../clusters/real/kube-api.ts';
import type { KubeAccess } from '../../clusters/real/kube-cli.ts';
import type { RunContext } from '../../clusters/provider.ts';
import { Topology, type TopologySpec } from '../../harness/model/scenario-schema.ts';

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
}

/** Puts the fakes alone on PATH for the duration of a test; returns the recorder. */
export function fakeTools(replies: Reply[] = [], pathDir = FAKES) {
  const dir = mkdtempSync(join(tmpdir(), 'netrepro-fakes-'));
  const log = join(dir, 'calls.jsonl');
  writeFileSync(log, '');
  writeFileSync(join(dir, 'replies.json'), JSON.stringify(replies));
  const saved = { PATH: process.env.PATH, LOG: process.env.NETREPRO_FAKE_LOG, REPLIES: process.env.NETREPRO_FAKE_REPLIES, NODE: process.env.NETREPRO_NODE };
  process.env.PATH = pathDir;
  process.env.NETREPRO_FAKE_LOG = log;
  process.env.NETREPRO_FAKE_REPLIES = join(dir, 'replies.json');
  process.env.NETREPRO_NODE = process.execPath;
  return {
    dir,
    calls: (): Recorded[] => readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Recorded),
    /** `tool arg arg ...` per call, for exact sequence assertions. */
    lines: (): string[] => readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => { const c = JSON.parse(l) as Recorded; return [c.tool, ...c.argv].join(' '); }),
    restore() {
      const put = (k: string, v: string | undefined) => (v === undefined ? delete process.env[k] : (process.env[k] = v));
      put('PATH', saved.PATH);
      put('NETREPRO_FAKE_LOG', saved.LOG);
      put('NETREPRO_FAKE_REPLIES', saved.REPLIES);
      put('NETREPRO_NODE', saved.NODE);
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
  deleted: string[];
}

/** A KubeApi with the given nodes; Services get 10.96.100.N, pods 10.244.9.N, every exec succeeds. */
export function recordingKubeApi(nodes: ClusterNode[]): { api: RecordingApi; factory: (access: KubeAccess) => KubeApi } {
  let svc = 0;
  let pod = 0;
  const api: RecordingApi = {
    accesses: [], namespaces: [], configMaps: [], services: [], pods: [], execs: [], deleted: [],
    listNodes: async () => nodes,
    createNamespace: async (b) => void api.namespaces.push(b),
    createConfigMap: async (b) => void api.configMaps.push(b),
    createService: async (b) => (api.services.push(b), { ...b, spec: { ...b.spec, clusterIP: `10.96.100.${++svc}` } }),
    createPod: async (b) => void api.pods.push(b),
    waitPodReady: async (namespace, name) => ({ metadata: { name, namespace }, status: { podIP: `10.244.9.${++pod}` } }),
    logs: async (p) => `ready ${p.container}\n`,
    exec: async (p, argv) => (api.execs.push({ pod: p, argv }), { argv, exitCode: 0, stdout: '', stderr: '', timedOut: false, durationMs: 0 }),
    spawn: () => { throw new Error('not used'); },
    deleteNamespace: async (name) => void api.deleted.push(name),
  };
  return { api, factory: (access) => (api.accesses.push(access), api) };
}

export function runContext(runId = 'abc123'): RunContext & { lines: string[] } {
  const lines: string[] = [];
  return { runId, prefix: `nr-${runId}-`, signal: new AbortController().signal, log: (l) => lines.push(l), lines };
}

/** Scenario topology through the real schema (defaults applied); `cni` is set after parsing, as flannel is no scenario shape. */
export function topology(input: { cni: string; nodes: number; cilium?: { bpfMasquerade?: boolean; socketLB?: boolean }; startOrder?: ('kube-proxy' | 'cilium')[] }): TopologySpec {
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
      { name: 'web', clusterIP: '10.96.0.20', ports: [{ name: 'http', port: 80, targetPort: 8080 }], endpoints: ['web'] },
      { name: 'kube-dns', namespace: 'kube-system', clusterIP: '10.96.0.10', ports: [{ name: 'dns', port: 53, targetPort: 53, protocol: 'UDP' }], endpoints: ['coredns'] },
    ],
  });
  return { ...t, cni: input.cni } as TopologySpec;
}
