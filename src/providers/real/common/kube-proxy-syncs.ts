// How often a node's kube-proxy has rewritten its rules: its metrics endpoint (127.0.0.1:10249 in the node's
// network namespace, every release since 1.10) counts its syncs. In iptables mode before 1.26 every sync is a
// full iptables-restore that flushes each chain it declares, and so starts their rules' counters again from zero.
import type { Target } from '../../../contract/provider.ts';

const METRICS = ['curl', '-s', '--max-time', '2', 'http://127.0.0.1:10249/metrics'];
const SYNC_COUNT = /^kubeproxy_sync_proxy_rules_duration_seconds_count(?:\{[^}]*\})? (\d+)/m;

/** The sync count in kube-proxy's metrics text, if it is there. */
export function parseSyncCount(metrics: string): number | undefined {
  const m = SYNC_COUNT.exec(metrics);
  return m ? Number(m[1]) : undefined;
}

/** The node's kube-proxy sync count; undefined where no kube-proxy answers (Cilium in its place, say). */
export async function kubeProxySyncs(node: Target): Promise<number | undefined> {
  const r = await node.exec(METRICS, { timeoutMs: 5000, reject: false }).catch(() => undefined);
  return r?.exitCode === 0 ? parseSyncCount(r.stdout) : undefined;
}
