// The client's own capture, with the kernel's times: traced events are stamped when the harness reads them
// (ms late, unevenly), so a traced packet that the client sent or received is placed next to its capture.
import { capturedAtMs, type Packet } from '../probes/packet-watch.ts';
import { flagKey, type PacketTuple } from './path-packets.ts';

/** A packet of the client's capture and when it was captured, in ms since the trace started. */
export interface CapturedPacket {
  p: Packet;
  at: number | undefined;
}

/** When tcpdump captured the packet of `line`, in ms since the trace started. */
function captureAt(line: string, startedAt: number | undefined): number | undefined {
  const at = startedAt === undefined ? undefined : capturedAtMs(line, startedAt);
  return at === undefined || startedAt === undefined ? undefined : Math.round((at - startedAt) * 10) / 10;
}

export class ClientCapture {
  /** The first 16 packets the client's interface saw, in capture order. */
  readonly packets: CapturedPacket[];

  constructor(packets: Packet[], startedAt: number | undefined) {
    this.packets = packets.slice(0, 16).map((p) => ({ p, at: captureAt(p.line, startedAt) }));
  }

  /**
   * When the client captured `pkt` (same tuple, same flags, or with `anyFlags` any SYN), moved by `offset` ms
   * so the traced step sorts on the right side of it; undefined if the client did not capture it.
   */
  anchor(pkt: PacketTuple & { flags?: string }, offset: number, anyFlags = false): number | undefined {
    const c = this.packets.find(
      ({ p }) =>
        p.src === pkt.src &&
        p.dst === pkt.dst &&
        p.sport === pkt.sport &&
        p.dport === pkt.dport &&
        (anyFlags ? p.flags?.includes('S') : flagKey(p.flags) === flagKey(pkt.flags)),
    );
    return c?.at === undefined ? undefined : Math.round((c.at + offset) * 100) / 100;
  }
}
