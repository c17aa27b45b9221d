// Compares what a probe observed with what the phase expects. A mismatch is a result, not an exception.
import type { Observation } from '../model/outcome.ts';
import type { ExpectedSpec } from '../model/scenario-schema.ts';

export interface Match {
  matched: boolean;
  /** The expectation as a person reads it: `unexpected-source from pod/web (10.244.1.3)`. */
  expected: string;
  /** Why it did not hold, when it did not. */
  mismatch?: string;
}

export function matchExpectation(expected: ExpectedSpec, observed: Observation, address: (ref: string) => string): Match {
  const spec = typeof expected === 'string' ? { outcome: expected } : expected;
  const parts: string[] = [spec.outcome];
  if ('servedBy' in spec && spec.servedBy) parts.push(`served by ${spec.servedBy}`);
  let sourceIp: string | undefined;
  if ('source' in spec && spec.source) {
    sourceIp = address(spec.source);
    parts.push(`from ${spec.source} (${sourceIp})`);
  }
  const connected = 'connected' in spec ? spec.connected : undefined;
  if (connected !== undefined) parts.push(connected ? 'TCP connected' : 'TCP not connected');
  const sentTo = 'sentTo' in spec && spec.sentTo ? (spec.sentTo.includes('/') ? address(spec.sentTo) : spec.sentTo) : undefined;
  if (sentTo) parts.push(`SYN sent to ${sentTo}`);
  const text = parts.join(', ');
  if (observed.outcome !== spec.outcome) return { matched: false, expected: text, mismatch: `expected ${spec.outcome}, observed ${observed.outcome}: ${observed.summary}` };
  if ('servedBy' in spec && spec.servedBy && observed.servedBy !== spec.servedBy) {
    return { matched: false, expected: text, mismatch: `expected an answer from ${spec.servedBy}, got one from ${observed.servedBy ?? 'nobody named'}` };
  }
  if (sourceIp && observed.source?.split(':')[0] !== sourceIp) {
    return { matched: false, expected: text, mismatch: `expected the reply from ${sourceIp}, it came from ${observed.source ?? 'nowhere'}` };
  }
  if (connected !== undefined && observed.connected !== connected) {
    return { matched: false, expected: text, mismatch: `expected the TCP handshake to ${connected ? '' : 'not '}complete; it did${observed.connected ? '' : ' not'}` };
  }
  if (sentTo && !(observed.sentTo === sentTo || (!sentTo.includes(':') && observed.sentTo?.split(':')[0] === sentTo))) {
    return { matched: false, expected: text, mismatch: `expected the SYN to go to ${sentTo}, it went to ${observed.sentTo ?? 'nowhere'}` };
  }
  return { matched: true, expected: text };
}
