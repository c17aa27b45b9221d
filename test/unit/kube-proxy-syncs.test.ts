// A node's kube-proxy sync count, read from its metrics text as kube-proxy v1.20.2 printed it on a kind node here.
import { describe, expect, it } from 'vitest';
import { parseSyncState } from '../../src/providers/real/common/kube-proxy-syncs.ts';

const metrics = (
  queued: string,
) => `# HELP kubeproxy_sync_proxy_rules_duration_seconds [ALPHA] SyncProxyRules latency in seconds
# TYPE kubeproxy_sync_proxy_rules_duration_seconds histogram
kubeproxy_sync_proxy_rules_duration_seconds_bucket{le="0.001"} 0
kubeproxy_sync_proxy_rules_duration_seconds_sum 1.3157
kubeproxy_sync_proxy_rules_duration_seconds_count 22
# HELP kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds [ALPHA] The last time a sync of proxy rules was queued
kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds ${queued}
# HELP kubeproxy_sync_proxy_rules_last_timestamp_seconds [ALPHA] The last time proxy rules were successfully synced
kubeproxy_sync_proxy_rules_last_timestamp_seconds 1.7958568829299958e+09
`;

describe('parseSyncState', () => {
  it("reads the sync histogram's count, and a sync queued after the last one as pending", () => {
    expect(parseSyncState(metrics('1.7958568828212464e+09'))).toEqual({ count: 22, pending: false });
    expect(parseSyncState(metrics('1.7958568830000000e+09'))).toEqual({ count: 22, pending: true });
  });

  it('nothing from text without the count (no kube-proxy there)', () => {
    expect(parseSyncState('# cilium-agent metrics\ncilium_endpoint_count 3\n')).toBeUndefined();
  });
});
