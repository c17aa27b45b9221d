// A packet watch shared by a repeated probe's runs: each run's window holds exactly the packets its own
// watch would have held (its connection's, from its start to its stop), with a fake tcpdump.
import { describe, expect, it } from 'vitest';
import type { ExecResult, Spawned } from '../../src/contract/command.ts';
import type { Target } from '../../src/contract/provider.ts';
import { capturedSince, PacketWatch, type Packet } from '../../src/observe/probes/packet-watch.ts';

/** A tcpdump that is listening at once and prints what the test hands it; `exit` ends it. */
function fakeTcpdump(): { target: Target; print: (line: string) => void; started: () => number; exit: () => void } {
  const listeners: ((line: string) => void)[] = [];
  const lines = ['listening on eth0, link-type EN10MB'];
  let spawns = 0;
  let exit = () => {};
  const exited = new Promise<void>((resolve) => (exit = resolve));
  const result = {
    argv: ['tcpdump'],
    exitCode: 0,
    stdout: '',
    stderr: '',
    timedOut: false,
    durationMs: 1,
  } as ExecResult;
  const process: Spawned = {
    argv: ['tcpdump'],
    pid: 1,
    waitFor: (pattern) =>
      new Promise((resolve, reject) => {
        const seen = lines.find((l) => pattern.test(l));
        if (seen) return resolve(seen);
        listeners.push((l) => pattern.test(l) && resolve(l));
        void exited.then(() => reject(new Error('exited')));
      }),
    lines: () => [...lines],
    onLine: (l) => void listeners.push(l),
    stop: () => exited.then(() => result),
  };
  const target: Target = {
    ref: 'pod/client',
    exec: () => Promise.reject(new Error('no exec')),
    spawn: () => (spawns++, process),
  };
  return {
    target,
    print: (line) => {
      lines.push(line);
      for (const l of [...listeners]) l(line);
    },
    started: () => spawns,
    exit,
  };
}

const syn = (port: number) =>
  `12:00:00.000001 IP 10.244.1.2.${port} > 10.96.0.23.80: Flags [S], seq 1, win 64240, length 0`;
const synAck = (port: number) =>
  `12:00:00.000002 IP 10.96.0.23.80 > 10.244.1.2.${port}: Flags [S.], seq 9, ack 2, win 65160, length 0`;
const icmp = '12:00:00.000003 IP 10.244.1.1 > 10.244.1.2: ICMP 10.96.0.23 tcp port 80 unreachable, length 68';

describe('a packet watch shared by a series', () => {
  it("gives each run its own connection's packets (and every ICMP) from its start to its stop", async () => {
    const tcpdump = fakeTcpdump();
    const watch = await PacketWatch.start(tcpdump.target, ['tcp', 'or', 'icmp']);
    const mine = (port: number) => (p: { proto: string; sport: number; dport: number }) =>
      p.proto === 'icmp' || p.sport === port || p.dport === port;
    tcpdump.print(syn(20000)); // before either run started
    const a = watch.window(mine(20001));
    const b = watch.window(mine(20002));
    const early: number[] = [];
    b.onPacket((seen) => early.push(seen.length));
    tcpdump.print(syn(20001));
    tcpdump.print(syn(20002));
    tcpdump.print(synAck(20002));
    tcpdump.print(icmp);
    const aPackets = await a.stop();
    tcpdump.print(synAck(20001)); // after a stopped
    expect(aPackets.map((p) => p.line)).toEqual([syn(20001), icmp]);
    expect((await a.stop()).length).toBe(2);
    expect((await b.stop()).map((p) => p.line)).toEqual([syn(20002), synAck(20002), icmp]);
    expect(early).toEqual([1, 2, 3]);
    expect(tcpdump.started()).toBe(1);
    tcpdump.exit();
    expect((await watch.stop()).length).toBe(6);
  });

  it('until() resolves at the packet it waits for, or after maxMs', async () => {
    const tcpdump = fakeTcpdump();
    const watch = await PacketWatch.start(tcpdump.target, ['tcp']);
    const run = watch.window(() => true);
    const waiting = run.until((seen) => seen.some((p) => p.flags === 'S.'), 5000);
    tcpdump.print(syn(20001));
    tcpdump.print(synAck(20001));
    await waiting;
    const started = performance.now();
    await run.until(() => false, 20);
    expect(performance.now() - started).toBeGreaterThanOrEqual(15);
  });

  it('stop() returns once the lines tcpdump counts in its statistics are read, before it exits', async () => {
    const tcpdump = fakeTcpdump();
    const watch = await PacketWatch.start(tcpdump.target, ['tcp']);
    tcpdump.print(syn(20001));
    const stopped = watch.stop();
    // statistics can be read before the last packet line (two pipes): stop() waits for the line
    tcpdump.print('2 packets captured');
    let done = false;
    void stopped.then(() => (done = true));
    await new Promise((r) => setTimeout(r, 10));
    expect(done).toBe(false);
    tcpdump.print(synAck(20001));
    expect((await stopped).map((p) => p.flags)).toEqual(['S', 'S.']);
    tcpdump.exit();
  });

  it('stop() waits for the exit when tcpdump prints no statistics', async () => {
    const tcpdump = fakeTcpdump();
    const watch = await PacketWatch.start(tcpdump.target, ['tcp']);
    let done = false;
    const stopped = watch.stop().then(() => (done = true));
    await new Promise((r) => setTimeout(r, 10));
    expect(done).toBe(false);
    tcpdump.exit();
    await stopped;
  });
});

describe("capturedSince: a watch started ahead of its probe keeps what was captured from the probe's start on", () => {
  const at = (hms: string): Packet => ({
    src: '10.244.1.2',
    sport: 1,
    dst: '10.96.0.20',
    dport: 80,
    proto: 'tcp',
    flags: 'S',
    line: `${hms} IP 10.244.1.2.1 > 10.96.0.20.80: Flags [S]`,
  });
  const local = (h: number, m: number, s: number, ms: number) => new Date(2026, 10, 23, h, m, s, ms).getTime();

  it('by the time tcpdump stamped on the packet, not when the line was printed', () => {
    const keep = capturedSince(local(16, 22, 1, 500));
    expect(keep(at('16:22:01.499999'))).toBe(false);
    expect(keep(at('16:22:01.500000'))).toBe(true);
    expect(keep(at('16:23:00.000001'))).toBe(true);
  });

  it('across midnight, and a line without a time is kept', () => {
    const keep = capturedSince(local(23, 59, 59, 900));
    expect(keep(at('23:59:59.800000'))).toBe(false);
    expect(keep(at('00:00:00.100000'))).toBe(true);
    expect(keep({ ...at('x'), line: 'IP 10.244.1.2.1 > 10.96.0.20.80' })).toBe(true);
  });
});
