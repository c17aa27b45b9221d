// `netrepro capture`: what decides a packet's fate on a node, read read-only into a bundle (docs/capture.md) that
// `netrepro import` turns into a lab scenario. Where it reads: this host (the node itself), the nodes of a run
// kept with `run --keep` (their network namespaces), or a real cluster's node through `kubectl debug`.
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { runCommand } from '../../contract/command.ts';
import { HarnessError } from '../../model/errors.ts';
import type { Bundle, BundleManifest } from '../../observe/capture/bundle-manifest.ts';
import { bundleFiles, captureBundle, type CaptureInput } from '../../observe/capture/capture-bundle.ts';
import { CONNTRACK_DEFAULT_LINES } from '../../observe/capture/capture-commands.ts';
import {
  type ClusterCapture,
  givenClusterObjects,
  type Kubectl,
  readClusterObjects,
} from '../../observe/capture/cluster-objects.ts';
import { TargetReader } from '../../observe/capture/node-reader.ts';
import { redactBundle, redactionMapping, redactionOf } from '../../observe/capture/redact.ts';
import { ScriptReader } from '../../observe/capture/script-reader.ts';
import { defaultBundleName, mappingPath, writeBundle } from '../../observe/capture/write-bundle.ts';
import { findKeptRun, thisHost } from '../../providers/kept-run.ts';
import {
  debugPodName,
  deleteDebugPodArgv,
  type KubectlDebugInput,
  kubectlDebugArgv,
  podLogsArgv,
  podPhaseArgv,
} from '../../providers/kubectl-debug-node.ts';

export interface CaptureOptions {
  out?: string;
  redact?: boolean;
  /** true: the default bound; a string: the number of lines given. */
  conntrack?: boolean | string;
  kubeconfig?: string;
  /** This host's node name (default: the hostname). */
  nodeName?: string;
  run?: string;
  node?: string[];
  kubectlDebug?: string[];
  image: string;
  /** kubectl debug's --profile (sysadmin: a privileged pod, kubectl >= 1.27). */
  debugProfile?: string;
  /** The kubectl to run for --kubectl-debug and --kubeconfig (default: kubectl on PATH). */
  kubectl?: string;
}

export default async function capture(options: CaptureOptions): Promise<number> {
  const started = performance.now();
  const conntrackLines = conntrackBound(options.conntrack);
  const input = await captureInput(options, conntrackLines);
  let bundle = await captureBundle(input);
  const at = new Date(bundle.manifest.capturedAt);
  const label = input.nodes.length === 1 ? input.nodes[0]!.name : (options.run ?? 'cluster');
  const out = resolve(options.out ?? defaultBundleName(label, at));
  let mapping: { path: string; text: string } | undefined;
  if (options.redact) {
    const redaction = redactionOf(bundle);
    bundle = redactBundle(bundle, redaction);
    mapping = { path: mappingPath(out), text: `${JSON.stringify(redactionMapping(redaction), null, 2)}\n` };
    if (existsSync(mapping.path))
      throw new HarnessError(
        'USAGE',
        `${mapping.path} exists`,
        'the redaction mapping goes there: move it, or name another --out',
      );
  }
  const written = await writeBundle(out, bundleFiles(bundle));
  // beside the bundle, never inside it
  if (mapping) await writeFile(mapping.path, mapping.text, { flag: 'wx' });
  process.stdout.write(summary(out, bundle, written, Math.round(performance.now() - started)));
  if (mapping)
    process.stderr.write(`redaction mapping (original -> bundle names), kept outside the bundle: ${mapping.path}\n`);
  return 0;
}

function conntrackBound(option: CaptureOptions['conntrack']): number | undefined {
  if (option === undefined || option === false) return undefined;
  if (option === true) return CONNTRACK_DEFAULT_LINES;
  const n = Number(option);
  if (!Number.isInteger(n) || n < 1)
    throw new HarnessError('USAGE', `--conntrack=${option}: a whole number of lines >= 1`, 'e.g. --conntrack=5000');
  return n;
}

async function captureInput(options: CaptureOptions, conntrackLines: number | undefined): Promise<CaptureInput> {
  const modes = [options.run !== undefined, (options.kubectlDebug?.length ?? 0) > 0].filter(Boolean).length;
  if (modes > 1)
    throw new HarnessError('USAGE', '--run and --kubectl-debug exclude each other', 'one source at a time');
  if (options.node && options.run === undefined)
    throw new HarnessError(
      'USAGE',
      '--node selects nodes of a kept run',
      'use it with --run RUNID (on a node itself: --node-name)',
    );
  if (options.run !== undefined && options.kubeconfig)
    throw new HarnessError(
      'USAGE',
      '--kubeconfig with --run: a kept run gives its own cluster objects (a lab its file, a local cluster its kubeconfig)',
      'leave --kubeconfig out',
    );
  if (options.run !== undefined) return keptRunInput(options.run, options.node, conntrackLines);
  const kubeconfig = options.kubeconfig ?? (process.env.KUBECONFIG || undefined);
  if (options.kubectlDebug?.length) {
    const kubectl = options.kubectl ?? 'kubectl';
    const profile = options.debugProfile;
    return {
      source: { kind: 'kubectl-debug', run: null, kubeconfig: kubeconfig ?? null },
      nodes: options.kubectlDebug.map((node) => ({
        name: node,
        reader: new ScriptReader((script) =>
          debugRun({ kubectl, kubeconfig, node, image: options.image, profile, script }),
        ),
      })),
      cluster: () => readClusterObjects(kubectlOn([kubectl, ...(kubeconfig ? ['--kubeconfig', kubeconfig] : [])])),
      node: { conntrackLines, brNetfilter: 'module' },
    };
  }
  return {
    source: { kind: 'host', run: null, kubeconfig: kubeconfig ?? null },
    nodes: [{ name: options.nodeName ?? hostname(), reader: new TargetReader(thisHost()) }],
    cluster: kubeconfig
      ? () => readClusterObjects(kubectlOn([options.kubectl ?? 'kubectl', '--kubeconfig', kubeconfig]))
      : undefined,
    node: { conntrackLines, brNetfilter: 'module' },
  };
}

async function keptRunInput(
  runId: string,
  only: string[] | undefined,
  conntrackLines: number | undefined,
): Promise<CaptureInput> {
  const run = await findKeptRun(runId);
  const unknown = (only ?? []).filter((n) => !run.nodes.some((x) => x.name === n || x.kubeName === n));
  if (unknown.length > 0)
    throw new HarnessError(
      'USAGE',
      `run ${runId} has no node ${unknown.join(', ')}`,
      `its nodes: ${run.nodes.map((n) => n.name).join(', ') || 'none left'}`,
    );
  const nodes = run.nodes.filter((n) => !only || only.includes(n.name) || only.includes(n.kubeName));
  if (nodes.length === 0) throw new HarnessError('USAGE', `run ${runId} has no node namespace left to capture`);
  return {
    source: { kind: run.kind, run: runId, kubeconfig: run.kubectl?.kubeconfig ?? null },
    nodes: nodes.map((n) => ({ name: n.kubeName, reader: new TargetReader(n.target), cgroupRoot: n.cgroup })),
    cluster:
      run.kind === 'lab' ? () => labObjects(run.labObjects!) : () => readClusterObjects(kubectlOn(run.kubectl!.argv)),
    // both stand for "br_netfilter not loaded" per node namespace, as the br-netfilter step sets it
    node: { conntrackLines, brNetfilter: 'lab-emulation' },
  };
}

/** A lab's objects as it wrote them; a lab that wrote none (made by an older netrepro) says so. */
async function labObjects(read: () => Promise<unknown>): Promise<ClusterCapture> {
  try {
    return givenClusterObjects((await read()) as Parameters<typeof givenClusterObjects>[0]);
  } catch (e) {
    return {
      files: new Map(),
      serverVersion: null,
      entry: {
        files: {},
        unreadable: [{ what: 'cluster', command: [], why: `the lab's cluster-objects.json: ${(e as Error).message}` }],
      },
    };
  }
}

const kubectlOn =
  (prefix: readonly string[]): Kubectl =>
  async (args) => {
    const r = await runCommand([...prefix, ...args], { reject: false, timeoutMs: 60_000 });
    return { argv: r.argv, stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode };
  };

/** One node's script in a debug pod: started, waited for, its log read, then deleted. */
async function debugRun(i: KubectlDebugInput): Promise<{ stdout: string; failure?: string }> {
  const run = (argv: string[], timeoutMs = 60_000) =>
    runCommand(argv, { reject: false, timeoutMs }).catch((e: Error) => ({
      exitCode: undefined,
      stdout: '',
      stderr: e.message,
    }));
  const started = await run(kubectlDebugArgv(i));
  // kubectl 1.20 prints the pod's name on stdout, later ones on stderr
  const pod = debugPodName(`${started.stderr}\n${started.stdout}`);
  if (started.exitCode !== 0 || !pod)
    return {
      stdout: '',
      failure: `kubectl debug node/${i.node}: exit ${started.exitCode ?? '?'}: ${tail(started.stderr)}`,
    };
  try {
    let phase = '';
    const deadline = Date.now() + DEBUG_POD_TIMEOUT_MS;
    while (!['Succeeded', 'Failed'].includes(phase) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      phase = (await run(podPhaseArgv(i, pod))).stdout.trim();
    }
    if (!['Succeeded', 'Failed'].includes(phase))
      return {
        stdout: '',
        failure: `debug pod ${pod} still ${phase || 'unknown'} after ${DEBUG_POD_TIMEOUT_MS / 1000} s`,
      };
    const logs = await run(podLogsArgv(i, pod), 120_000);
    if (logs.exitCode !== 0) return { stdout: '', failure: `kubectl logs ${pod}: ${tail(logs.stderr)}` };
    return { stdout: logs.stdout, failure: phase === 'Failed' ? `debug pod ${pod} failed` : undefined };
  } finally {
    const d = await run(deleteDebugPodArgv(i, pod));
    if (d.exitCode !== 0) process.stderr.write(`the debug pod ${pod} stays: ${d.stderr.trim()}\n`);
  }
}

const DEBUG_POD_TIMEOUT_MS = 300_000;
const tail = (s: string) => s.trim().slice(-400);

const kib = (n: number) => (n < 1024 ? `${n} B` : `${(n / 1024).toFixed(1)} KiB`);

/** What was captured, with sizes, and what could not be read. */
export function summary(
  out: string,
  bundle: Bundle,
  written: { sizes: Map<string, number>; tarballBytes?: number },
  ms: number,
): string {
  const m: BundleManifest = bundle.manifest;
  const size = (path: string) => written.sizes.get(path) ?? 0;
  const lines: string[] = [];
  const total = [...written.sizes.values()].reduce((a, b) => a + b, 0);
  lines.push(
    `captured ${m.nodes.length} node(s) from ${m.source.kind}${m.source.run ? ` run ${m.source.run}` : ''} in ${(ms / 1000).toFixed(1)} s${m.redacted ? ' (redacted)' : ''}`,
  );
  lines.push(
    `bundle: ${out} (${written.sizes.size} files, ${kib(total)}${written.tarballBytes !== undefined ? `; ${kib(written.tarballBytes)} compressed` : ''})`,
  );
  if (m.cluster) {
    const files = Object.values(m.cluster.files);
    lines.push(
      `  cluster: ${files.map((f) => `${f.replace(/^cluster\//, '')} ${kib(size(f))}`).join(', ') || 'nothing'}`,
    );
    for (const u of m.cluster.unreadable) lines.push(`    not read: ${u.what}: ${u.why}`);
  }
  for (const n of m.nodes) {
    const files = Object.entries(n.files);
    lines.push(
      `  ${n.name}: ${files.length} files, ${kib(files.reduce((a, [, f]) => a + size(f), 0))}${n.conntrack.captured ? `; conntrack ${n.conntrack.entries} entries${n.conntrack.truncatedAt ? ` (truncated at ${n.conntrack.truncatedAt})` : ''}` : ''}`,
    );
    lines.push(`    ${files.map(([k, f]) => `${k} ${kib(size(f))}`).join(', ')}`);
    for (const u of n.unreadable) lines.push(`    not read: ${u.what}: ${u.why}`);
  }
  return `${lines.join('\n')}\n`;
}
