// How the packet path writes a packet, and when two packets of a trace are the same one.
import type { TracePacket } from '../../model/trace-events.ts';

/** A packet's addresses and ports, as a capture or a trace gives them. */
export type PacketTuple = Pick<TracePacket, 'src' | 'dst' | 'sport' | 'dport'>;

/** `10.0.0.1:5000 > 10.96.0.10:80 [S]`, or the protocol where there are no flags. */
export const short = (p: { proto: string; src: string; dst: string; sport?: number; dport?: number; flags?: string }) =>
  `${p.src}${p.sport !== undefined ? `:${p.sport}` : ''} > ${p.dst}${p.dport !== undefined ? `:${p.dport}` : ''} ${p.flags ? `[${p.flags}]` : p.proto}`;

/** TCP flags as a set of letters, from tcpdump (`S.`, `F.`, `R`) or from the trace (`SYN ACK`). */
export function flagKey(flags: string | undefined): string {
  if (!flags) return '';
  const letters = /[A-Z]{3}/.test(flags)
    ? flags.split(/\s+/).map((w) => w[0]!)
    : [...flags].map((c) => (c === '.' ? 'A' : c));
  return [...new Set(letters)].sort().join('');
}

const sameTuple = (a: PacketTuple, b: PacketTuple) =>
  a.src === b.src && a.dst === b.dst && a.sport === b.sport && a.dport === b.dport;

/** The same tuple with the same TCP flags. */
export const samePacket = (a: PacketTuple & { flags?: string }, b: PacketTuple & { flags?: string }) =>
  sameTuple(a, b) && flagKey(a.flags) === flagKey(b.flags);
