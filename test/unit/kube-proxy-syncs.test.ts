// A node's kube-proxy sync count, read from its metrics text as kube-proxy v1.20.2 printed it on a kind node here.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Target } from '../../src/contract/provider.ts';
import { parseSyncState, waitKubeProxySettled } from '../../src/providers/real/common/kube-proxy-syncs.ts';

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

/** A node whose kube-proxy answers with the next of `answers` (sync count, last sync in s) at each read, then the last. */
function node(answers: [number, number][]): Target & { reads: number } {
  const t = {
    ref: 'node/a',
    reads: 0,
    exec: async () => {
      const [count, last] = answers[Math.min(t.reads++, answers.length - 1)]!;
      const stdout = `kubeproxy_sync_proxy_rules_duration_seconds_count ${count}\nkubeproxy_sync_proxy_rules_last_timestamp_seconds ${last}\n`;
      return { exitCode: 0, stdout, stderr: '' };
    },
  };
  return t as unknown as Target & { reads: number };
}

describe('waitKubeProxySettled', () => {
  // its polls and its minSyncPeriod on a fake clock: the waits are counted, not spent
  beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'Date'] }));
  afterEach(() => vi.useRealTimers());
  const settled = async (p: Promise<void>) => {
    await vi.runAllTimersAsync();
    await p;
  };

  const since = 1_000_000_000_000; // ms; the syncs below are after it
  it('waits past a second start-up sync that comes after the first (1 -> 2), until the count holds for a minSyncPeriod', async () => {
    const n = node([
      [1, 1_000_000_001],
      [1, 1_000_000_001],
      [2, 1_000_000_001.2],
    ]);
    const t0 = Date.now();
    await settled(waitKubeProxySettled(n, since, new AbortController().signal));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
    expect(n.reads).toBeGreaterThan(3);
  });

  it('does not take the metrics of a process that last synced before the start as settled', async () => {
    const n = node([
      [57, 999_999_000],
      [57, 999_999_000],
      [57, 999_999_000],
      [57, 999_999_000],
      [57, 999_999_000],
      [57, 999_999_000],
      [57, 999_999_000],
      [1, 1_000_000_001],
    ]);
    await settled(waitKubeProxySettled(n, since, new AbortController().signal));
    expect(n.reads).toBeGreaterThan(8);
  });

  it('gives up with why once aborted', async () => {
    const abort = new AbortController();
    abort.abort();
    await expect(waitKubeProxySettled(node([[0, 0]]), since, abort.signal)).rejects.toThrow(
      /aborted while waiting for kube-proxy/,
    );
  });
});
