// Compares what a probe observed with what the phase expects. A mismatch is a result, not an exception.
import type { Observation } from '../../model/outcome.ts';
import type { ExpectedSpec } from '../../model/scenario-schema.ts';
import { runsOf, type RunSummary } from '../probes/repeat-stats.ts';

export interface Match {
  matched: boolean;
  /** The expectation as a person reads it: `unexpected-source from pod/web (10.244.1.3)`. */
  expected: string;
  /** Why it did not hold, when it did not. */
  mismatch?: string;
}

export function matchExpectation(
  expected: ExpectedSpec,
  observed: Observation,
  address: (ref: string) => string,
): Match {
  const runs = runsOf(observed);
  if (runs) return matchRuns(expected, runs, observed, address);
  return matchOne(expected, observed, address);
}

type Bounds = { min?: number; max?: number };

function within(value: number, b: Bounds): boolean {
  return (b.min === undefined || value >= b.min) && (b.max === undefined || value <= b.max);
}

function describeBounds(b: Bounds, unit = ''): string {
  if (b.min !== undefined && b.max !== undefined)
    return b.min === b.max ? `${b.min}${unit}` : `${b.min}${unit}..${b.max}${unit}`;
  return b.min !== undefined ? `>= ${b.min}${unit}` : b.max !== undefined ? `<= ${b.max}${unit}` : 'any number';
}

/**
 * A repeated probe: a run "matches" when it meets the whole expectation (outcome, servedBy, source...).
 * Without count/rate every run must match; with them the number (or fraction) of matching runs must fall
 * in range; with `otherwise` every other run must have that outcome.
 */
function matchRuns(
  expected: ExpectedSpec,
  runs: readonly RunSummary[],
  observed: Observation,
  address: (ref: string) => string,
): Match {
  const spec = typeof expected === 'string' ? { outcome: expected } : expected;
  const { count, rate, otherwise, sameBackend, ...single } = spec as Exclude<ExpectedSpec, string>;
  const one = matchOne(single as ExpectedSpec, { ...runs[0]!, detail: {} } as Observation, address);
  const n = runs.length;
  const bounds: Bounds =
    count !== undefined
      ? typeof count === 'number'
        ? { min: count, max: count }
        : count
      : rate === undefined
        ? { min: n, max: n }
        : {};
  const matching = runs.filter(
    (r) => matchOne(single as ExpectedSpec, { ...r, detail: {} } as Observation, address).matched,
  );
  const others = runs.filter((r) => !matching.includes(r));
  const parts = [
    count !== undefined
      ? `${one.expected} in ${describeBounds(bounds)} of ${n} runs`
      : rate !== undefined
        ? `${one.expected} in ${describeBounds({ min: rate.min && rate.min * 100, max: rate.max && rate.max * 100 }, '%')} of ${n} runs`
        : `${one.expected} in every run (${n})`,
    ...(otherwise ? [`otherwise ${otherwise}`] : []),
    ...(sameBackend ? ['all served by one pod'] : []),
  ];
  const text = parts.join(', ');
  const seen = `observed ${observed.summary}`;
  if (!within(matching.length, bounds))
    return {
      matched: false,
      expected: text,
      mismatch: `${matching.length} of ${n} runs matched (${one.expected}); ${seen}`,
    };
  if (rate !== undefined && !within(matching.length / n, rate)) {
    return {
      matched: false,
      expected: text,
      mismatch: `${((matching.length / n) * 100).toFixed(1)}% of ${n} runs matched (${one.expected}); ${seen}`,
    };
  }
  const stray = otherwise ? others.filter((r) => r.outcome !== otherwise) : [];
  if (stray.length > 0)
    return {
      matched: false,
      expected: text,
      mismatch: `${stray.length} run(s) neither ${one.expected} nor ${otherwise}, e.g. ${stray[0]!.summary}; ${seen}`,
    };
  // session affinity: whichever pod answered the first run answered every other one
  const backends = new Set(matching.map((r) => r.servedBy ?? 'nobody named'));
  if (sameBackend && backends.size > 1) {
    return {
      matched: false,
      expected: text,
      mismatch: `the runs were served by ${backends.size} pods (${[...backends].join(', ')}), not one; ${seen}`,
    };
  }
  return { matched: true, expected: text };
}

function matchOne(expected: ExpectedSpec, observed: Observation, address: (ref: string) => string): Match {
  const spec = typeof expected === 'string' ? { outcome: expected } : expected;
  // a list: any of those failures holds
  const allowed: readonly string[] = Array.isArray(spec.outcome) ? spec.outcome : [spec.outcome];
  const parts: string[] = [allowed.join(' or ')];
  if ('servedBy' in spec && spec.servedBy) parts.push(`served by ${spec.servedBy}`);
  let sourceIp: string | undefined;
  if ('source' in spec && spec.source) {
    sourceIp = address(spec.source);
    parts.push(`from ${spec.source} (${sourceIp})`);
  }
  const connected = 'connected' in spec ? spec.connected : undefined;
  if (connected !== undefined) parts.push(connected ? 'TCP connected' : 'TCP not connected');
  const sentTo =
    'sentTo' in spec && spec.sentTo ? (spec.sentTo.includes('/') ? address(spec.sentTo) : spec.sentTo) : undefined;
  if (sentTo) parts.push(`SYN sent to ${sentTo}`);
  const resolve = (a: string) => (a.includes('/') ? address(a) : a);
  const wanted = 'answer' in spec && spec.answer ? spec.answer : undefined;
  // one address the answer must hold, or the exact set a list names
  const answer = wanted === undefined ? undefined : Array.isArray(wanted) ? wanted.map(resolve) : resolve(wanted);
  if (answer) parts.push(Array.isArray(answer) ? `answer exactly ${answer.join(',')}` : `answer ${answer}`);
  const httpStatus = 'httpStatus' in spec ? spec.httpStatus : undefined;
  if (httpStatus !== undefined) parts.push(`HTTP ${httpStatus}`);
  const localEndpoints = 'localEndpoints' in spec ? spec.localEndpoints : undefined;
  if (localEndpoints !== undefined) parts.push(`localEndpoints ${localEndpoints}`);
  const clientRef = 'clientAddress' in spec ? spec.clientAddress : undefined;
  const clientIp = clientRef && (clientRef.includes('/') ? address(clientRef) : clientRef);
  if (clientRef)
    parts.push(`the server saw the client as ${clientRef === clientIp ? clientIp : `${clientRef} (${clientIp})`}`);
  const text = parts.join(', ');
  // what the wire alone tells needs the wire: a probe none of whose packets the client's interface captured
  // (its traffic went over another interface, or the capture saw nothing) cannot show where they went or came
  // from (whether it connected, curl's connect time says)
  const wire = [sourceIp && 'its source', sentTo && 'where its SYN went'];
  const unobserved = wire.filter(Boolean);
  if (unobserved.length && Array.isArray(observed.detail.packets) && observed.detail.packets.length === 0)
    return {
      matched: false,
      expected: text,
      mismatch: `unobserved: none of the probe's packets was captured on the client's interface, so ${unobserved.join(' and ')} cannot be judged: ${observed.summary}`,
    };
  // a DNS reply is only ok when its answer section holds the address the expectation names
  const got = observed.answers ?? [];
  const holds = Array.isArray(answer)
    ? got.length === answer.length && [...got].sort().join() === [...answer].sort().join()
    : answer === undefined || got.includes(answer);
  const wrongAnswer = answer !== undefined && observed.outcome === 'ok' && !holds;
  const outcome = wrongAnswer ? 'wrong-answer' : observed.outcome;
  const why = wrongAnswer
    ? ` (answer ${got.join(',') || 'empty'}, expected ${Array.isArray(answer) ? `exactly ${answer.join(',')}` : answer})`
    : '';
  if (!allowed.includes(outcome))
    return {
      matched: false,
      expected: text,
      mismatch: `expected ${allowed.join(' or ')}, observed ${outcome}${why}: ${observed.summary}`,
    };
  if ('servedBy' in spec && spec.servedBy && observed.servedBy !== spec.servedBy) {
    return {
      matched: false,
      expected: text,
      mismatch: `expected an answer from ${spec.servedBy}, got one from ${observed.servedBy ?? 'nobody named'}`,
    };
  }
  if (sourceIp && observed.source?.split(':')[0] !== sourceIp) {
    return {
      matched: false,
      expected: text,
      mismatch: `expected the reply from ${sourceIp}, it came from ${observed.source ?? 'nowhere'}`,
    };
  }
  // the address the server reported seeing, whatever the port (a source port SNAT may have changed)
  if (clientIp && observed.clientAddress?.split(':')[0] !== clientIp) {
    return {
      matched: false,
      expected: text,
      mismatch: `expected the server to see the client as ${clientIp}, it saw ${observed.clientAddress ?? 'nothing it reported'}`,
    };
  }
  if (httpStatus !== undefined && observed.httpStatus !== httpStatus) {
    return {
      matched: false,
      expected: text,
      mismatch: `expected HTTP ${httpStatus}, got ${observed.httpStatus ?? 'no HTTP answer'}`,
    };
  }
  if (localEndpoints !== undefined && observed.localEndpoints !== localEndpoints) {
    return {
      matched: false,
      expected: text,
      mismatch: `expected a health check reporting localEndpoints ${localEndpoints}, got ${observed.localEndpoints ?? 'no such answer'}`,
    };
  }
  if (connected !== undefined && observed.connected !== connected) {
    return {
      matched: false,
      expected: text,
      mismatch: `expected the TCP handshake to ${connected ? '' : 'not '}complete; it did${observed.connected ? '' : ' not'}`,
    };
  }
  if (sentTo && !(observed.sentTo === sentTo || (!sentTo.includes(':') && observed.sentTo?.split(':')[0] === sentTo))) {
    return {
      matched: false,
      expected: text,
      mismatch: `expected the SYN to go to ${sentTo}, it went to ${observed.sentTo ?? 'nowhere'}`,
    };
  }
  return { matched: true, expected: text };
}
