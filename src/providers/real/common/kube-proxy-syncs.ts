// How often a node's kube-proxy has rewritten its rules: its metrics endpoint (127.0.0.1:10249 in the node's
// network namespace, every release since 1.10) counts its syncs, and says when it last queued one and last
// finished one. In iptables mode before 1.26 every sync is a full iptables-restore that flushes each chain it
// declares, and so starts their rules' counters again from zero.
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
