// kube-proxy has no readiness probe in kubeadm's DaemonSet, so its pod is Ready as soon as it runs, before it
// wrote a rule. Its own metric says when it last synced its rules: a start is done once that is after it.
// (The local provider, whose next phase may read rule counters at once, also waits out the start-up syncs
// that follow the first: common/kube-proxy-syncs.ts.)
import { HarnessError } from '../../../model/errors.ts';
import type { Target } from '../../../contract/provider.ts';

/** kube-proxy's metrics, served on the node (kubeadm's metricsBindAddress, the loopback by default). */
export const KUBE_PROXY_METRICS = ['curl', '-fsS', 'http://127.0.0.1:10249/metrics'] as const;
const LAST_SYNC = /^kubeproxy_sync_proxy_rules_last_timestamp_seconds(?:\{[^}]*\})? (\S+)$/m;
const TIMEOUT_MS = 60_000;
const POLL_MS = 500;

/** Waits until the node's kube-proxy synced its rules at or after `sinceMs` (the host's clock, which kind's nodes share). */
export async function waitKubeProxySynced(node: Target, sinceMs: number, signal: AbortSignal): Promise<void> {
  const deadline = Date.now() + TIMEOUT_MS;
  let last = 'no metrics yet';
  for (;;) {
    const got = await node.exec([...KUBE_PROXY_METRICS], { reject: false, signal });
    const seconds = Number(LAST_SYNC.exec(got.stdout)?.[1]);
    if (got.exitCode === 0 && seconds * 1000 >= Math.floor(sinceMs / 1000) * 1000) return;
    last = got.exitCode === 0 ? `last sync at ${Number.isNaN(seconds) ? 'none' : seconds}` : got.stderr.trim();
    if (signal.aborted) throw new HarnessError('ABORTED', "aborted while waiting for kube-proxy's first sync");
    if (Date.now() > deadline)
      throw new HarnessError(
        'LAB_FAILED',
        `kube-proxy on ${node.ref} did not sync its rules within ${TIMEOUT_MS / 1000} s of its start (${last})`,
      );
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
