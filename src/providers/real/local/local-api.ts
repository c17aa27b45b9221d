// What the `local` provider asks of its API server while bringing the cluster up: through
// @kubernetes/client-node and the run's socket (loadKubeConfig).
import { CoreV1Api, type V1Node } from '@kubernetes/client-node';
import { get, type RequestOptions } from 'node:https';
import { HarnessError } from '../../../model/errors.ts';
import { loadKubeConfig, mergePatch } from '../common/client-kube-api.ts';
import type { KubeAccess } from '../common/kube-cli.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function localApi(access: KubeAccess, signal?: AbortSignal) {
  const kc = loadKubeConfig(access);
  const core = kc.makeApiClient(CoreV1Api);
  const server = kc.getCurrentCluster()!.server;

  /** Polls `check` (the API's answer) until it returns a value; the last error or state goes into the timeout's message. */
  async function until<T>(
    what: string,
    timeoutMs: number,
    check: () => Promise<T | undefined>,
    intervalMs = 250,
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    for (;;) {
      try {
        const v = await check();
        if (v !== undefined) return v;
      } catch (e) {
        last = (e as Error).message.split('\n')[0] ?? '';
      }
      if (signal?.aborted) throw new HarnessError('ABORTED', `aborted while waiting for ${what}`);
      if (Date.now() > deadline)
        throw new HarnessError('LAB_FAILED', `${what}: not within ${timeoutMs} ms${last ? ` (last: ${last})` : ''}`);
      await sleep(intervalMs);
    }
  }

  const readyz = async (): Promise<true | undefined> => {
    const opts: RequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    return new Promise((resolve, reject) => {
      const req = get(`${server}/readyz`, opts, (res) => {
        res.resume();
        resolve(res.statusCode === 200 ? true : undefined);
      });
      req.on('error', reject);
      req.setTimeout(2000, () => req.destroy(new Error('timeout')));
    });
  };
  const readNode = (name: string): Promise<V1Node> => core.readNode({ name });

  return {
    ready: (timeoutMs: number) => until('kube-apiserver /readyz', timeoutMs, readyz, 200).then(() => undefined),
    waitNodeRegistered: (name: string, timeoutMs: number) =>
      until(`node ${name} registered`, timeoutMs, () => readNode(name)).then(() => undefined),
    nodeReady: (name: string, timeoutMs: number) =>
      until(`node ${name} Ready`, timeoutMs, async () =>
        (await readNode(name)).status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
          ? true
          : undefined,
      ).then(() => undefined),
    /** The scenario's podCIDR on the Node (set once: the controller-manager allocates none here). */
    setPodCIDR: async (name: string, cidr: string) => {
      await core.patchNode({ name, body: { spec: { podCIDR: cidr, podCIDRs: [cidr] } } }, mergePatch);
    },
  };
}

export type LocalApi = ReturnType<typeof localApi>;
