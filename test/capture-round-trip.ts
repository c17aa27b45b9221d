// What the capture round trips share: the source scenarios' states a replay is checked against, and which probe
// of an imported scenario goes where a source scenario's probe goes (import names probes by client and target).
import type { ProbeResult } from '../src/engine/run/results.ts';

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
