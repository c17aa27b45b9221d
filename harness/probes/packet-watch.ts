// Watches the probing pod's own interface while a probe runs, so the probe can name what the
// client really saw (a SYN-ACK from an address it never contacted, its own RST) instead of a bare timeout.
import type { Spawned } from '../../clusters/command.ts';
import type { Target } from '../../clusters/provider.ts';

export interface Packet {
  src: string;
  sport: number;
  dst: string;
  dport: number;
  proto: 'tcp' | 'udp';
  /** tcpdump's TCP flags: S, S., ., P., R, R., F. ... */
  flags?: string;
  line: string;
}

const LINE = /IP (\d+\.\d+\.\d+\.\d+)\.(\d+) > (\d+\.\d+\.\d+\.\d+)\.(\d+): (?:Flags \[([^\]]+)\])?/;

export function parseTcpdumpLine(line: string): Packet | undefined {
  const m = LINE.exec(line);
  if (!m) return undefined;
  const [, src, sport, dst, dport, flags] = m;
  return { src: src!, sport: Number(sport), dst: dst!, dport: Number(dport), proto: flags ? 'tcp' : 'udp', flags, line: line.trim() };
}

export class PacketWatch {
  private stopped?: Promise<Packet[]>;

  private constructor(private readonly process: Spawned) {}

  /** Starts tcpdump on the pod's eth0 and resolves once it is really listening. */
  static async start(target: Target, filter: string[]): Promise<PacketWatch> {
    const process = target.spawn(['tcpdump', '-i', 'eth0', '-nn', '-l', '--immediate-mode', '-p', ...filter]);
    const watch = new PacketWatch(process);
    try {
      await process.waitFor(/listening on/, 3000);
    } catch (e) {
      await process.stop('SIGKILL');
      throw e;
    }
    return watch;
  }

  /** Called with every packet seen so far, each time one arrives: lets a probe call its verdict early. */
  onPacket(listener: (packets: readonly Packet[]) => void): void {
    const seen: Packet[] = [];
    this.process.onLine((line) => {
      const packet = parseTcpdumpLine(line);
      if (!packet) return;
      seen.push(packet);
      listener(seen);
    });
  }

  /** Idempotent: the first call stops tcpdump, every call returns the same packets. */
  stop(): Promise<Packet[]> {
    this.stopped ??= this.process.stop('SIGINT').then(() => this.process.lines().flatMap((l) => parseTcpdumpLine(l) ?? []));
    return this.stopped;
  }
}
