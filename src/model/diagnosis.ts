// A probe's diagnosis, as the JSON report carries it (contract: src/report/report-schema.ts):
// the culprit, the packet, a few sentences, and the packet path hop by hop. Built by src/observe/trace/.
import type { TracePacket } from './trace-events.ts';

/** `conntrack`: an entry that kept a translation no rule makes any more. */
export type CulpritKind = 'rule' | 'bpf-program' | 'kernel' | 'socket' | 'conntrack';

export interface PathStep {
  /** ms since the trace started (client capture times are lined up by wall clock). */
  at: number;
  /** The lane: where the probe's client runs (`pod/client`, `node/node-a`), a node, a bridge. */
  where: string;
  /** The interface, hook, table/chain, conntrack, or program. */
  hook: string;
  packet: string;
  action: string;
  /** `reject`: a rule answered the packet (RST or ICMP) instead of passing it; `drop`: it was dropped silently. */
  kind: 'send' | 'receive' | 'netfilter' | 'conntrack' | 'drop' | 'reject' | 'bpf' | 'bridge';
  culprit?: boolean;
  /** Not traced directly: deduced from the other steps and the lab's facts. */
  inferred?: boolean;
}

/** Kernel state a diagnosis rests on, as a command printed it in a namespace of the lab: a setting, a route, a conntrack entry. */
export interface StateRead {
  /** `node/NAME`, `pod/NAME`, `host/NAME` or `fabric`. */
  where: string;
  command: string;
  output: string;
}

export interface Diagnosis {
  culprit: { kind: CulpritKind; node: string; where: string; text: string };
  packet: TracePacket;
  /** A few plain sentences: what happened to which packet, and why. */
  reason: string;
  /** The state behind the culprit, read from the kernel: what made it act so (rp_filter and the route back, the NAT's conntrack entry). */
  evidence?: StateRead[];
  path: PathStep[];
}
