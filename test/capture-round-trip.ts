// What the capture round trips share: the source scenarios' states a replay is checked against, and which probe
// of an imported scenario goes where a source scenario's probe goes (import names probes by client and target).
import { expect } from 'vitest';
import type { PhaseResult, ProbeResult } from '../src/engine/run/results.ts';

export const CAPTURE_SOURCES = new URL('./fixtures/capture/sources/', import.meta.url).pathname;

/** source probe id -> the imported probe to the same destination from the same client */
export const SAME_DESTINATION: Record<string, string> = {
  'cross-node': 'client-web-b',
  'svc-other-node': 'client-web-80',
  'svc-same-node': 'client-local-80',
  hairpin: 'web-a-local-80',
  'same-socket': 'client-dns-from-40000',
};

/** A source scenario left in one phase's state, and a piece of the culprit its broken probes name. */
export const LEFT_STATES = [
  { name: 'healthy', source: 'forward-drop', phase: 'baseline', culprit: undefined },
  { name: 'forward-drop', source: 'forward-drop', phase: 'faulted', culprit: '-P FORWARD DROP' },
  { name: 'br-netfilter-off', source: 'br-netfilter-off', phase: 'faulted', culprit: 'bridge-nf-call-iptables=0' },
  { name: 'no-masquerade', source: 'no-masquerade', phase: 'faulted', culprit: 'IP_LOCAL_SOURCE' },
] as const;

/** The probes a capture of a forward-drop-shaped lab is compared by (the UDP source has its own). */
export const TCP_PROBES = ['cross-node', 'svc-other-node', 'svc-same-node', 'hairpin'] as const;

/** The culprit as one line, the client's ephemeral port left out (it differs from run to run). */
export const culpritLine = (p: ProbeResult | undefined) => {
  const c = p?.diagnosis?.culprit;
  return c ? `${c.kind} ${c.where} on ${c.node}: ${c.text}`.replace(/:\d{5}\b/g, ':PORT') : undefined;
};

/**
 * Each replayed probe observed what the source's probe to the same destination observed, and a broken one names
 * the state's culprit (and the source's own, where the source was traced); a healthy state replays all ok and a
 * faulted one does not. The rows say what each side saw.
 */
export function expectSameOutcomes(
  source: PhaseResult,
  replay: PhaseResult,
  state: (typeof LEFT_STATES)[number],
  sourceTraced: boolean,
): string[] {
  const rows = TCP_PROBES.map((id) => {
    const replayId = SAME_DESTINATION[id]!;
    const before = source.probes.find((p) => p.id === id)!;
    const after = replay.probes.find((p) => p.id === replayId)!;
    expect(after.observed, `replay ${replayId} vs source ${id}`).toBe(before.observed);
    if (after.observed !== 'ok') {
      expect(culpritLine(after), `replay ${replayId}`).toContain(state.culprit);
      if (sourceTraced) expect(culpritLine(after), `replay ${replayId}`).toBe(culpritLine(before));
    }
    return `${id}: source ${before.observed} / replay ${after.observed}; replay's culprit ${culpritLine(after) ?? '-'}`;
  });
  expect(replay.probes.every((p) => p.observed === 'ok')).toBe(state.name === 'healthy');
  return rows;
}
