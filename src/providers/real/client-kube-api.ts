// KubeApi on a real API server through @kubernetes/client-node: typed CRUD, polling for readiness,
// and commands in containers through the Exec API (websocket), never through a shell string.
import {
  CoreV1Api,
  Exec,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Pod,
  type V1Status,
} from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { Agent, type AgentOptions } from 'node:https';
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { Readable, Writable } from 'node:stream';
import { CommandFailedError, HarnessError } from '../../model/errors.ts';
import { LineLog, type ExecOptions, type ExecResult, type Spawned } from '../../contract/command.ts';
import type { ClusterNode, KubeApi, PodRef } from './kube-api.ts';
import type { KubeAccess } from './kube-cli.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The request option that sends a patch as a JSON merge patch (the client's default is a JSON patch). */
export const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

function exitCodeOf(status: V1Status): number | undefined {
  if (status.status === 'Success') return 0;
  const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
  return cause?.message !== undefined ? Number(cause.message) : undefined;
}

/** Collects a stream's text and hands out complete lines as they arrive. */
class TextSink extends Writable {
  text = '';
  private partial = '';
  constructor(private readonly onLine?: (line: string) => void) {
    super();
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void) {
    const s = chunk.toString();
    this.text += s;
    if (this.onLine) {
      const parts = (this.partial + s).split('\n');
      this.partial = parts.pop() ?? '';
      for (const line of parts) this.onLine(line);
    }
    done();
  }
}

/**
 * The run's kubeconfig and context; with `access.socket`, every connection (requests and exec websockets)
 * goes through that unix socket, TLS and the server's name checked as for a direct connection.
 */
export function loadKubeConfig(access: KubeAccess): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(access.kubeconfig);
  kc.setCurrentContext(access.context);
  if (access.socket) {
    const socket = access.socket;
    // createAgent is private in the typings; it is the one place both fetch and the websockets take their agent from
    (kc as unknown as { createAgent: (cluster: unknown, options: AgentOptions) => Agent }).createAgent = (
      _cluster,
      options,
    ) => {
      const agent = new Agent({ ...options, keepAlive: true });
      (agent as unknown as { createConnection: (o: ConnectionOptions) => unknown }).createConnection = (o) =>
        tlsConnect({ ...o, socket: netConnect(socket) });
      return agent;
    };
  }
  return kc;
}

export function clientKubeApi(access: KubeAccess): KubeApi {
  const kc = loadKubeConfig(access);
  const core = kc.makeApiClient(CoreV1Api);
  const execApi = new Exec(kc);

  /** Runs argv in a container; resolves with the exit code the kubelet reports. */
  function run(pod: PodRef, argv: readonly string[], stdout: TextSink, stderr: TextSink, input?: string) {
    let socket: { close(): void } | undefined;
    const done = new Promise<number | undefined>((resolve, reject) => {
      execApi
        .exec(
          pod.namespace,
          pod.name,
          pod.container,
          [...argv],
          stdout,
          stderr,
          input === undefined ? null : Readable.from([input]),
          false,
          (status) => resolve(exitCodeOf(status)),
        )
        .then((ws) => {
          socket = ws;
          ws.on('close', () => resolve(undefined));
        }, reject);
    });
    return { done, close: () => socket?.close() };
  }

  return {
    async listNodes(): Promise<ClusterNode[]> {
      const list = await core.listNode();
      return list.items.map((n) => ({
        name: n.metadata!.name!,
        internalIP: n.status?.addresses?.find((a) => a.type === 'InternalIP')?.address ?? '',
        podCIDR: n.spec?.podCIDR,
        kubeletVersion: n.status?.nodeInfo?.kubeletVersion,
      }));
    },
    async createNamespace(body) {
      await core.createNamespace({ body });
    },
    async createConfigMap(body) {
      await core.createNamespacedConfigMap({ namespace: body.metadata!.namespace!, body });
    },
    createService(body) {
      return core.createNamespacedService({ namespace: body.metadata!.namespace!, body });
    },
    async createPod(body) {
      await core.createNamespacedPod({ namespace: body.metadata!.namespace!, body });
    },
    async patchPod(namespace, name, patch) {
      await core.patchNamespacedPod({ name, namespace, body: patch }, mergePatch);
    },
    async patchService(namespace, name, patch) {
      await core.patchNamespacedService({ name, namespace, body: patch }, mergePatch);
    },
    async waitPodReady(namespace, name, timeoutMs, ready = true) {
      const deadline = Date.now() + timeoutMs;
      let last: V1Pod | undefined;
      while (Date.now() < deadline) {
        last = await core.readNamespacedPod({ name, namespace });
        const status = last.status;
        const isReady = status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
        const started = (status?.containerStatuses ?? []).every((c) => c.state?.running);
        if (status?.podIP && (ready ? isReady : started && status.containerStatuses?.length && !isReady)) return last;
        await sleep(1000);
      }
      const waiting = (last?.status?.containerStatuses ?? []).flatMap((c) =>
        c.state?.waiting ? [`${c.name}: ${c.state.waiting.reason} ${c.state.waiting.message ?? ''}`.trim()] : [],
      );
      throw new HarnessError(
        'LAB_FAILED',
        `pod ${namespace}/${name} not ${ready ? 'ready' : 'running'} after ${timeoutMs} ms (phase ${last?.status?.phase ?? 'unknown'}${waiting.length ? `; ${waiting.join('; ')}` : ''})`,
        'images are pulled from Docker Hub on first use; check the node can pull them',
      );
    },
    async logs(pod) {
      return core.readNamespacedPodLog({ name: pod.name, namespace: pod.namespace, container: pod.container });
    },
    async exec(pod, argv, options: ExecOptions = {}): Promise<ExecResult> {
      const started = performance.now();
      const stdout = new TextSink();
      const stderr = new TextSink();
      const where = `pod/${pod.name}`;
      const running = run(pod, argv, stdout, stderr, options.input);
      let timedOut = false;
      const timer = options.timeoutMs
        ? setTimeout(() => ((timedOut = true), running.close()), options.timeoutMs)
        : undefined;
      const onAbort = () => running.close();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      try {
        const exitCode = await running.done;
        if (options.signal?.aborted)
          throw new HarnessError('ABORTED', `aborted while running in ${where}: ${argv.join(' ')}`);
        const result: ExecResult = {
          argv,
          exitCode,
          stdout: stdout.text,
          stderr: stderr.text,
          timedOut,
          durationMs: performance.now() - started,
        };
        if (options.reject !== false && (exitCode !== 0 || timedOut))
          throw new CommandFailedError(argv, exitCode, stdout.text, stderr.text, where);
        return result;
      } finally {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
      }
    },
    spawn(pod, argv): Spawned {
      // Closing an exec stream does not stop the process in the container, so it records its pid
      // and stop() signals it there (SIGINT makes tcpdump flush and exit cleanly).
      const pidFile = `/tmp/netrepro-${randomBytes(4).toString('hex')}.pid`;
      const wrapped = ['sh', '-c', `echo $$ > ${pidFile}; exec "$@"`, 'sh', ...argv];
      const started = performance.now();
      let push: (line: string) => void = () => {};
      const running = run(pod, wrapped, new TextSink((l) => push(l)), new TextSink((l) => push(l)));
      const exited = running.done.catch(() => undefined);
      const log = new LineLog(argv, exited, `pod/${pod.name}`);
      push = log.push;
      return {
        argv,
        pid: undefined,
        lines: () => log.lines(),
        onLine: (listener) => log.onLine(listener),
        waitFor: (pattern, timeoutMs) => log.waitFor(pattern, timeoutMs),
        async stop(signal = 'SIGTERM') {
          const sig = signal.replace(/^SIG/, '');
          await execDetached(pod, ['sh', '-c', `kill -${sig} "$(cat ${pidFile})" 2>/dev/null; rm -f ${pidFile}`]);
          const exitCode = await Promise.race([exited, sleep(5000).then(() => (running.close(), undefined))]);
          return {
            argv,
            exitCode,
            stdout: log.lines().join('\n'),
            stderr: '',
            timedOut: false,
            durationMs: performance.now() - started,
          };
        },
      };
    },
    async deleteNamespace(name) {
      try {
        await core.deleteNamespace({ name });
      } catch (e) {
        if ((e as { code?: number }).code !== 404) throw e;
      }
    },
  };

  async function execDetached(pod: PodRef, argv: readonly string[]) {
    const r = run(pod, argv, new TextSink(), new TextSink());
    await Promise.race([r.done.catch(() => undefined), sleep(10_000)]);
    r.close();
  }
}
