// What a probe can observe. Shared by probes (which classify), expectations and reports.
export const OUTCOMES = [
  'ok',
  'timeout',
  'reset',
  'refused',
  'unexpected-source',
  'wrong-answer',
  'unreachable',
  'error',
] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** A probe's structured result: the outcome class plus what backs it (exit codes, packets, sources). */
export interface Observation {
  outcome: Outcome;
  /** One line a person reads: `client -> 10.96.0.20:80 = unexpected-source (SYN-ACK from 10.244.1.3:8080)`. */
  summary: string;
  /** Pod name the answer came from, when the server names itself (the agent's HTTP and UDP servers). */
  servedBy?: string;
  /** Address:port the server saw the request come from, as it reported it in its answer (HTTP, UDP). */
  clientAddress?: string;
  /** Address:port the answer came from. */
  source?: string;
  /** TCP probes: whether the handshake completed. */
  connected?: boolean;
  /** TCP probes: where the client's SYN really went (differs from the URL when connect() was rewritten). */
  sentTo?: string;
  /** HTTP probes: the status code of the answer, when one came. */
  httpStatus?: number;
  /** HTTP probes of a kube-proxy health check: the `localEndpoints` its JSON body reports. */
  localEndpoints?: number;
  /** DNS probes: the addresses in the answer section of the server's reply. */
  answers?: string[];
  durationMs: number;
  detail: Record<string, unknown>;
}
