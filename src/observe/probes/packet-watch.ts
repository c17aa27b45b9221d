// Watches the probing pod's own interface while a probe runs, so the probe can name what the
// client really saw (a SYN-ACK from an address it never contacted, its own RST) instead of a bare timeout.
import { CAPTURE_READY_MS } from '../capture-ready.ts';
import type { Spawned } from '../../contract/command.ts';
import type { Target } from '../../contract/provider.ts';

export interface Packet {
  src: string;
  /** 0 for ICMP. */
  sport: number;
  dst: string;
  dport: number;
  proto: 'tcp' | 'udp' | 'icmp';
  /** tcpdump's TCP flags: S, S., ., P., R, R., F. ... */
  flags?: string;
  /** ICMP destination unreachable: what it says about which packet. */
  icmp?: IcmpUnreachable;
  line: string;
}

/** An ICMP destination-unreachable (type 3) message, as tcpdump prints it without -v. */
export interface IcmpUnreachable {
  type: 3;
  code: number;
  /** The code's name: port-unreachable, host-unreachable, admin-prohibited, ... */
  name: string;
  /** The destination of the packet that provoked it. */
  about: string;
  /** port-unreachable: the protocol and port it names. */
  port?: { proto: string; port: number };
}

const LINE = /IP (\d+\.\d+\.\d+\.\d+)\.(\d+) > (\d+\.\d+\.\d+\.\d+)\.(\d+): (?:Flags \[([^\]]+)\])?/;
const ICMP_LINE = /IP (\d+\.\d+\.\d+\.\d+) > (\d+\.\d+\.\d+\.\d+): ICMP (.*?)(?:, length \d+)?$/;

/** tcpdump's wording of ICMP unreachable codes (print-icmp.c), code by code: RFC 792 and RFC 1812. */
const UNREACHABLE: { re: RegExp; code: number; name: string }[] = [
  { re: /^(\S+) (tcp|udp) port (\d+) unreachable/, code: 3, name: 'port-unreachable' },
  { re: /^net (\S+) unreachable - admin prohibited/, code: 9, name: 'net-prohibited' },
  { re: /^host (\S+) unreachable - admin prohibited filter/, code: 13, name: 'admin-prohibited' },
  { re: /^host (\S+) unreachable - admin prohibited/, code: 10, name: 'host-prohibited' },
  { re: /^net (\S+) unreachable/, code: 0, name: 'net-unreachable' },
  { re: /^host (\S+) unreachable/, code: 1, name: 'host-unreachable' },
  { re: /^(\S+) protocol \d+ unreachable/, code: 2, name: 'protocol-unreachable' },
  { re: /^(\S+) unreachable - need to frag/, code: 4, name: 'frag-needed' },
];

export function parseTcpdumpLine(line: string): Packet | undefined {
  const icmp = ICMP_LINE.exec(line);
  if (icmp) {
    const [, src, dst, text] = icmp as unknown as [string, string, string, string];
    const kind = UNREACHABLE.find((u) => u.re.test(text));
    const m = kind?.re.exec(text);
    const unreachable: IcmpUnreachable | undefined =
      kind && m
        ? {
            type: 3,
            code: kind.code,
            name: kind.name,
            about: m[1]!,
            ...(kind.code === 3 ? { port: { proto: m[2]!, port: Number(m[3]) } } : {}),
          }
        : undefined;
    return { src, sport: 0, dst, dport: 0, proto: 'icmp', icmp: unreachable, line: line.trim() };
  }
  const m = LINE.exec(line);
  if (!m) return undefined;
  const [, src, sport, dst, dport, flags] = m;
  return {
    src: src!,
    sport: Number(sport),
    dst: dst!,
    dport: Number(dport),
    proto: flags ? 'tcp' : 'udp',
    flags,
    line: line.trim(),
  };
}

/** The capture time of a packet line, as seconds of the day (tcpdump prints local time, HH:MM:SS.micro). */
/**
 * When tcpdump captured the packet of `line` (it prints local time, `HH:MM:SS.ffffff`), as epoch ms: on the
 * day of `nearMs`, or the one before or after when that is closer (a run across midnight).
 */
export function capturedAtMs(line: string, nearMs: number): number | undefined {
  const m = /^(\d\d):(\d\d):(\d\d\.\d+) /.exec(line);
  if (!m) return undefined;
  const d = new Date(nearMs);
  d.setHours(Number(m[1]), Number(m[2]), 0, 0);
  const at = d.getTime() + Number(m[3]) * 1000;
  const day = 86_400_000;
  return at - nearMs > day / 2 ? at - day : nearMs - at > day / 2 ? at + day : at;
}

/**
 * Packets captured at or after `sinceMs` (epoch ms): a watch started ahead of its probe also printed what
 * went before, and a line may be printed a moment after the packet was captured.
 */
export function capturedSince(sinceMs: number): (p: Packet) => boolean {
  return (p) => (capturedAtMs(p.line, sinceMs) ?? sinceMs) >= sinceMs;
}

/** What a probe run reads its packets from: its own packet watch, or its window on the one its series shares. */
export interface PacketView {
  /** Called with every packet seen so far, each time one arrives: lets a probe call its verdict early. */
  onPacket(listener: (packets: readonly Packet[]) => void): void;
  /**
   * Waits until the packets seen satisfy `done`, at most `maxMs`: a connection that failed at once (a RST,
   * an ICMP error) ends curl in the same instant the packet arrives, and tcpdump may not have printed it yet.
   */
  until(done: (packets: readonly Packet[]) => boolean, maxMs: number): Promise<void>;
  /** Idempotent: the first call ends the view, every call returns the same packets. */
  stop(): Promise<Packet[]>;
}

/** The packets `keep` selects, as they arrive, until stopped. */
class PacketList {
  readonly packets: Packet[] = [];
  private readonly listeners: ((packets: readonly Packet[]) => void)[] = [];

  constructor(private readonly keep: (p: Packet) => boolean) {}

  add(packet: Packet): void {
    if (!this.keep(packet)) return;
    this.packets.push(packet);
    for (const listener of [...this.listeners]) listener(this.packets);
  }

  onPacket(listener: (packets: readonly Packet[]) => void): void {
    this.listeners.push(listener);
  }

  async until(done: (packets: readonly Packet[]) => boolean, maxMs: number): Promise<void> {
    if (done(this.packets)) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, maxMs);
      this.onPacket((seen) => {
        if (done(seen)) clearTimeout(timer), resolve();
      });
    });
  }
}

/**
 * How long a probe waits for a packet its client already saw to be printed: tcpdump may not have read it from
 * its ring yet, and stopped then it never prints it (it stops reading at the signal). A busy machine delays
 * tcpdump's wake-up by a scheduling slice or two; the wait ends as soon as the packet is printed.
 */
export const PRINT_LAG_MS = 250;

/** A packet line (it starts with tcpdump's timestamp), parsed or not; tcpdump prints one per packet it captured. */
const PACKET_LINE = /^\d\d:\d\d:\d\d\.\d+ /;
/** tcpdump's statistics at exit, printed after its last packet line. */
const CAPTURED = /^(\d+) packets? captured/;

export class PacketWatch {
  private stopped?: Promise<Packet[]>;
  private readonly all = new PacketList(() => true);
  private readonly windows = new Set<PacketList>();
  /** Packet lines read so far, and who waits for a count of them. */
  private printed = 0;
  private readonly printedWaiters = new Set<{ count: number; resolve: () => void }>();

  private constructor(private readonly process: Spawned) {
    process.onLine((line) => {
      if (PACKET_LINE.test(line)) {
        this.printed++;
        for (const w of this.printedWaiters) if (this.printed >= w.count) this.printedWaiters.delete(w), w.resolve();
      }
      const packet = parseTcpdumpLine(line);
      if (!packet) return;
      this.all.add(packet);
      for (const w of this.windows) w.add(packet);
    });
  }

  /** Starts tcpdump on the client's interface (a pod's or host's eth0; `any` on a node) and resolves once it is really listening. */
  static async start(target: Target, filter: string[], iface = 'eth0'): Promise<PacketWatch> {
    const process = target.spawn(['tcpdump', '-i', iface, '-nn', '-l', '--immediate-mode', '-p', ...filter]);
    const watch = new PacketWatch(process);
    try {
      await process.waitFor(/listening on/, CAPTURE_READY_MS);
    } catch (e) {
      await process.stop('SIGKILL');
      throw e;
    }
    return watch;
  }

  /**
   * One run's share of a watch a repeated probe's runs share: the packets `keep` selects (its connection's
   * own) from now until its stop, as a watch of its own would have seen them.
   */
  window(keep: (p: Packet) => boolean): PacketView {
    const list = new PacketList(keep);
    this.windows.add(list);
    let packets: Promise<Packet[]> | undefined;
    return {
      onPacket: (listener) => list.onPacket(listener),
      until: (done, maxMs) => list.until(done, maxMs),
      stop: () => (packets ??= (this.windows.delete(list), Promise.resolve([...list.packets]))),
    };
  }

  /**
   * Idempotent: the first call stops tcpdump, every call returns the same packets: all of them once the
   * lines it counts in its statistics (printed after its last packet line, on stderr) have been read, or at
   * its exit. Its exit comes ~20 ms later (closing a packet socket waits for an RCU grace period); nothing
   * is left to read by then, so the verdict does not wait for it.
   */
  stop(): Promise<Packet[]> {
    this.stopped ??= (async () => {
      const exited = this.process.stop('SIGINT').then(
        () => undefined,
        () => undefined,
      );
      const stats = await Promise.race([this.process.waitFor(CAPTURED, 5000).catch(() => undefined), exited]);
      const captured = Number(CAPTURED.exec(stats ?? '')?.[1] ?? NaN);
      if (!Number.isFinite(captured)) await exited;
      else if (captured > this.printed)
        await Promise.race([
          new Promise<void>((resolve) => this.printedWaiters.add({ count: captured, resolve })),
          exited,
        ]);
      return [...this.all.packets];
    })();
    return this.stopped;
  }
}
