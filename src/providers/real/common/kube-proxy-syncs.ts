// How often a node's kube-proxy has rewritten its rules: its metrics endpoint (127.0.0.1:10249 in the node's
// network namespace, every release since 1.10) counts its syncs, and says when it last queued one and last
// finished one. In iptables mode before 1.26 every sync is a full iptables-restore that flushes each chain it
// declares, and so starts their rules' counters again from zero.
import { HarnessError } from '../../../model/errors.ts';
import type { Target } from '../../../contract/provider.ts';

const METRICS = ['curl', '-s', '--max-time', '2', 'http://127.0.0.1:10249/metrics'];
const metric = (name: string) => new RegExp(`^kubeproxy_sync_proxy_rules_${name}(?:\\{[^}]*\\})? (\\S+)`, 'm');
const COUNT = metric('duration_seconds_count');
const LAST_SYNC = metric('last_timestamp_seconds');
const LAST_QUEUED = metric('last_queued_timestamp_seconds');

/** How long a pending sync is waited for before the count is read anyway. */
const SETTLE_MS = 3000;

export interface SyncState {
  count: number;
  /** A change is queued that no sync has written yet (its queued time is after the last sync). */
  pending: boolean;
}

/** The sync count in kube-proxy's metrics text, and whether a sync is pending; undefined without the count. */
export function parseSyncState(metrics: string): SyncState | undefined {
  const read = (re: RegExp) => Number(re.exec(metrics)?.[1] ?? Number.NaN);
  const count = read(COUNT);
  if (!Number.isInteger(count)) return undefined;
  const [last, queued] = [read(LAST_SYNC), read(LAST_QUEUED)];
  return { count, pending: Number.isFinite(queued) && Number.isFinite(last) && queued > last };
}

/**
 * The node's kube-proxy sync count; undefined where no kube-proxy answers (Cilium in its place, say). `settled`:
 * once no sync is pending (a change a step made may reach kube-proxy a moment after the rules it waited for),
 * so that a later count tells of a sync that came after this read.
 */
export async function kubeProxySyncs(node: Target, settled = false): Promise<number | undefined> {
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    const r = await node.exec(METRICS, { timeoutMs: 5000, reject: false }).catch(() => undefined);
    const state = r?.exitCode === 0 ? parseSyncState(r.stdout) : undefined;
    if (!state || !settled || !state.pending || Date.now() > deadline) return state?.count;
  }
}

/** kube-proxy's default iptables.minSyncPeriod: the longest a queued sync waits. */
const MIN_SYNC_MS = 1000;
const START_TIMEOUT_MS = 60_000;
const POLL_MS = 200;

/**
 * Waits until a kube-proxy started at `sinceMs` (the host's clock) has written its rules and its start-up syncs
 * are over. A start brings up to four syncs close together (each informer's synced call, the node's labels, the
 * run its informers queued, which waits at most its minSyncPeriod), each of which starts the counters of the
 * chains it declares again from zero: the start has settled once a sync came after `sinceMs` and the count has
 * stayed put for a minSyncPeriod. `alive` throws where the process is known to have exited.
 */
export async function waitKubeProxySettled(
  node: Target,
  sinceMs: number,
  signal: AbortSignal,
  alive: () => Promise<void> = async () => {},
): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  let seen: { count: number; since: number } | undefined;
  let state = 'no metrics yet';
  for (;;) {
    const r = await node.exec(METRICS, { timeoutMs: 5000, reject: false, signal }).catch(() => undefined);
    const text = r?.exitCode === 0 ? r.stdout : '';
    const sync = parseSyncState(text);
    const lastSyncMs = Number(LAST_SYNC.exec(text)?.[1]) * 1000;
    // the metric has whole-second precision at best on some releases: a sync in the start's second counts
    const fresh = sync !== undefined && lastSyncMs >= Math.floor(sinceMs / 1000) * 1000;
    if (sync && sync.count !== seen?.count) seen = { count: sync.count, since: Date.now() };
    else if (fresh && !sync.pending && Date.now() - seen!.since >= MIN_SYNC_MS) return;
    state = sync ? `${sync.count} syncs, the last at ${lastSyncMs / 1000}` : 'no metrics yet';
    if (signal.aborted) throw new HarnessError('ABORTED', 'aborted while waiting for kube-proxy to sync');
    await alive();
    if (Date.now() > deadline)
      throw new HarnessError(
        'LAB_FAILED',
        `kube-proxy on ${node.ref} did not settle within ${START_TIMEOUT_MS / 1000} s of its start (${state})`,
      );
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
