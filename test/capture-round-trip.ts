// What the capture round trips share: the source scenarios' states a replay is checked against, and which probe
// of an imported scenario goes where a source scenario's probe goes (import names probes by client and target).
import { expect } from 'vitest';
import type { PhaseResult, ProbeResult } from '../src/engine/run/results.ts';

const CAPTURE_SOURCES = new URL('./fixtures/capture/sources/', import.meta.url).pathname;
const SCENARIOS = new URL('../scenarios/', import.meta.url).pathname;

/** source probe id -> the imported probe to the same destination from the same client */
export const SAME_DESTINATION: Record<string, string> = {
  'cross-node': 'client-web-b',
  'svc-other-node': 'client-web-80',
  'svc-same-node': 'client-local-80',
  hairpin: 'web-a-local-80',
  'same-socket': 'client-dns-from-40000',
  'to-node-b': 'client-web-b',
  'from-node-b': 'client-b-web-a',
};

/** The probes a capture of a forward-drop-shaped lab is compared by. */
export const TCP_PROBES = ['cross-node', 'svc-other-node', 'svc-same-node', 'hairpin'] as const;

/**
 * A source scenario left in one phase's state, the probes compared, and a piece of the culprit its broken probes
 * name; `onV120`: what kube-proxy v1.20.2 leaves instead, where it differs from the lab's release (`gone`: the
 * entries of that flow are deleted, so the capture has nothing of it to replay).
 */
export interface LeftState {
  name: string;
  source: string;
  phase: 'baseline' | 'faulted';
  probes: readonly string[];
  culprit?: string;
  onV120?: { gone: string; observed: string };
  /** Captured with `--conntrack`: the state is in its entries (and import probes each UDP flow again). */
  conntrack?: true;
  /** The source is a shipped scenario (scenarios/), not one of the capture sources. */
  shipped?: true;
}

/** The source scenario's file. */
export const sourceFile = (state: LeftState) => `${state.shipped ? SCENARIOS : CAPTURE_SOURCES}${state.source}.yaml`;

export const LEFT_STATES: readonly LeftState[] = [
  { name: 'healthy', source: 'forward-drop', phase: 'baseline', probes: TCP_PROBES },
  { name: 'forward-drop', source: 'forward-drop', phase: 'faulted', probes: TCP_PROBES, culprit: '-P FORWARD DROP' },
  {
    name: 'br-netfilter-off',
    source: 'br-netfilter-off',
    phase: 'faulted',
    probes: TCP_PROBES,
    culprit: 'bridge-nf-call-iptables=0',
  },
  { name: 'no-masquerade', source: 'no-masquerade', phase: 'faulted', probes: TCP_PROBES, culprit: 'IP_LOCAL_SOURCE' },
  {
    // the flannel shape (flannel.1, VXLAN): node-a's route to node-b's pods deleted
    name: 'flannel-route-missing',
    source: 'flannel-subnet-route-missing',
    shipped: true,
    phase: 'faulted',
    probes: ['to-node-b', 'from-node-b'],
    culprit: 'no route for 10.244.2.',
  },
  {
    // the Service's only backend deleted: 1.32 keeps the client's entry (DNAT to the gone pod); v1.20.2 deletes
    // it with the endpoint, so the same socket meets the REJECT of a Service without endpoints
    name: 'udp-stale-conntrack',
    source: 'udp-stale-conntrack',
    phase: 'faulted',
    probes: ['same-socket'],
    conntrack: true,
    culprit: 'DNAT to 10.244.1.3:53',
    onV120: { gone: 'sport=40000 dport=53', observed: 'refused' },
  },
];

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
  state: LeftState,
  sourceTraced: boolean,
): string[] {
  const rows = state.probes.map((id) => {
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

/**
 * `capture --run` of a kept run into DIR/bundle (with `--conntrack` where the state is in its entries), then
 * `clean --run`, also when the capture failed; `cli` runs netrepro and returns its output.
 */
export async function captureAndClean(
  cli: (...args: string[]) => Promise<{ stdout: string; stderr: string }>,
  runId: string,
  dir: string,
  state: LeftState,
  source: 'lab' | 'local',
): Promise<void> {
  try {
    const out = ['--out', `${dir}/bundle`, ...(state.conntrack ? ['--conntrack'] : [])];
    const captured = await cli('capture', '--run', runId, ...out);
    expect(captured.stdout + captured.stderr).toMatch(new RegExp(`captured \\d node\\(s\\) from ${source} run`));
  } finally {
    await cli('clean', '--run', runId);
  }
}
