// The lab's trace sources and the events they record, for every probe of the lab (lab-tracer.ts says what is
// traced and when the monitors start): the drop filter's lines, and per node xtables-monitor --trace and
// conntrack -E with the raw table's TRACE rules. Each probe's watch (probe-watch.ts) sees the events recorded
// between its start and its stop.
//
// An ICMP error the node sends and drops (frag-needed dropped in OUTPUT: an MTU black hole) is about
// another packet: the kernel drop carries the header it quotes, and the rule verdicts of the same packet
// (xtables-monitor prints no ICMP header for it) are given that header, so the drop is attributed to the
// probe whose flow it is about, with the rule that dropped it.
import { stat } from 'node:fs/promises';
import type { ProbeTraceSession, TraceEvent, TraceFlows } from '../../../model/trace-events.ts';
import { NetlinkMonitor } from './netlink-monitor.ts';
import { parseConntrackLine, parseDropLine, XtablesTraceParser } from './parse-trace-lines.ts';
import { ProbeWatch } from './probe-watch.ts';
import { watchDrops, type DropWatch } from './shared-drop-trace.ts';
import type { Stamped } from './stamped-event.ts';
import { invalidTraceRule, labTraceRules, readTraceRuleset } from './trace-rules.ts';
import type { TracedLab } from './traced-lab.ts';

/** nf_tables trace events (NFNLGRP_NFTRACE, group 9) and conntrack events (NFNLGRP_CONNTRACK_NEW..DESTROY, 1-3): the Groups bits a monitor's socket joins. */
const GROUPS = { rules: 1 << 8, conntrack: 0b111 };

export class LabMonitors {
  private readonly events: Stamped[] = [];
  /** The running probes' watches: each sees every event from its start to its stop. */
  private readonly watches = new Set<ProbeWatch>();
  private readonly unavailable: string[] = [];
  private probes = 0;

  /** The drop filter and each node's monitors and TRACE rules started: all they need is the namespaces. */
  readonly begun: Promise<void>;
  /** Per node, its monitors that joined their netlink groups: a flush waits for each. */
  private readonly nodeMonitors = new Map<string, { rules?: NetlinkMonitor; events?: NetlinkMonitor }>();
  private drops: DropWatch | undefined;

  /** Starts them in the background. */
  constructor(private readonly lab: TracedLab) {
    this.begun = Promise.all([
      this.startDrops(),
      ...lab.nodeNames.map((n) => this.startMonitors(n).catch(this.nodeFailed(n))),
    ]).then(() => {});
  }

  private nodeFailed = (node: string) => (e: unknown) =>
    void this.unavailable.push(`rule verdicts and conntrack events on ${node}: ${(e as Error).message.split('\n')[0]}`);

  /** Once the lab has booted: what each node's ruleset says, then the monitors are ready for probes. */
  async complete(): Promise<LabMonitors> {
    await this.begun;
    await Promise.all(this.lab.nodeNames.map((n) => this.readRuleset(n).catch(this.nodeFailed(n))));
    return this;
  }

  private record(event: TraceEvent): void {
    const stamped = { ...event, stamp: performance.now() };
    this.events.push(stamped);
    this.quoteIcmpError(stamped);
    for (const w of this.watches) w.see(stamped);
  }

  /**
   * The same ICMP error seen by both: the kernel drop (with the header it quotes) and the rule verdicts
   * (without). The verdicts of that packet get the drop's ICMP fields, whichever arrived first.
   */
  private quoteIcmpError(e: Stamped): void {
    // only an ICMP error's drop or a verdict of a port-less packet can pair up; anything else (a bulk
    // download's qdisc drops, thousands a second) returns at once instead of scanning every event
    const candidate =
      (e.kind === 'drop' && e.packet.inner) || (e.kind === 'rule' && !e.packet.sport && !e.packet.inner);
    if (!candidate) return;
    const recent: Stamped[] = [];
    // stamps rise with arrival: the events of the last 250 ms are at the end
    for (let i = this.events.length - 1; i >= 0 && e.stamp - this.events[i]!.stamp < 250; i--)
      if (this.events[i] !== e) recent.unshift(this.events[i]!);
    const sameIp = (a: TraceEvent['packet'], b: TraceEvent['packet']) => a.src === b.src && a.dst === b.dst;
    const drop =
      e.kind === 'drop' && e.packet.inner
        ? e
        : e.kind === 'rule' && !e.packet.sport && !e.packet.inner
          ? recent.findLast(
              (x) => x.kind === 'drop' && x.packet.inner && x.where === `node/${e.node}` && sameIp(x.packet, e.packet),
            )
          : undefined;
    if (drop?.kind !== 'drop') return;
    const verdict = [...recent, e].findLast(
      (x) =>
        x.kind === 'rule' &&
        `node/${x.node}` === drop.where &&
        x.verdict === 'DROP' &&
        !x.packet.sport &&
        sameIp(x.packet, drop.packet),
    );
    if (verdict?.kind !== 'rule') return;
    for (const x of [...recent, e])
      if (x.kind === 'rule' && x.node === verdict.node && x.id === verdict.id) x.packet = drop.packet;
  }

  private async startDrops(): Promise<void> {
    try {
      const where = new Map<number, string>();
      const add = async (ns: string, ref: string) => where.set((await stat(this.lab.names.netnsPath(ns))).ino, ref);
      const names = this.lab.names;
      await Promise.all([
        add(names.fabric, 'fabric'),
        ...this.lab.topology.nodes.map((n) => add(names.node(n.name), `node/${n.name}`)),
        ...this.lab.topology.pods.map((p) => add(names.pod(p.name), `pod/${p.name}`)),
        ...this.lab.topology.hosts.map((h) => add(names.host(h.name), `host/${h.name}`)),
      ]);
      const watching = watchDrops([...where.keys()], this.lab.commands, (line) => {
        const event = parseDropLine(line, 0, (inum) => where.get(inum));
        if (event) this.record(event);
      });
      // registered before it resolves: a lab torn down meanwhile still takes its namespaces out of the filter
      this.lab.atTeardown('probe trace: the drop filter entries', async () =>
        (await watching.catch(() => undefined))?.stop(),
      );
      // the filter map is updated when bpftool returns: drops are traced from here on
      this.drops = await watching;
    } catch (e) {
      this.unavailable.push(`kernel drop reasons: ${(e as Error).message.split('\n')[0]}`);
    }
  }

  private async startMonitors(node: string): Promise<void> {
    const target = this.lab.node(node);
    const xtables = new NetlinkMonitor(target.spawn(['xtables-monitor', '--trace']), GROUPS.rules, this.lab.commands);
    const conntrack = new NetlinkMonitor(target.spawn(['conntrack', '-E']), GROUPS.conntrack, this.lab.commands);
    this.lab.track(xtables.process);
    this.lab.track(conntrack.process);
    const parser = new XtablesTraceParser(node);
    // a burst can overflow a monitor's socket (each datagram's verdicts take ~38 KB of its 208 KB) and end it:
    // every trace from then on says what is missing instead of reading as "no rule touched it"
    const ended = (what: string) => (line: string) => {
      if (/No buffer space available|ENOBUFS/.test(line))
        this.unavailable.push(`${what} on ${node}: its monitor ended (${line.trim()}): later events there are missing`);
    };
    xtables.onLine((line) => {
      const event = parser.feed(line, 0);
      if (event) this.record(event);
      else ended('rule verdicts')(line);
    });
    conntrack.onLine((line) => {
      const event = parseConntrackLine(line, 0, node);
      if (event) this.record(event);
      else ended('conntrack events')(line);
    });
    await target.exec(['iptables-restore', '-w', '--noflush'], { input: labTraceRules() });
    const inum = (await stat(target.netnsPath)).ino;
    const [rules, events] = await Promise.all([xtables.subscribe(inum), conntrack.subscribe(inum)]);
    this.nodeMonitors.set(node, { rules: rules ? xtables : undefined, events: events ? conntrack : undefined });
  }

  /** The booted node's ruleset: whether its rule verdicts are traced, and whether conntrack runs (then INVALID is traced too). */
  private async readRuleset(node: string): Promise<void> {
    const target = this.lab.node(node);
    const { traced, conntrack } = readTraceRuleset((await target.exec(['iptables-save'])).stdout);
    const monitors = this.nodeMonitors.get(node);
    if (monitors && !monitors.rules)
      this.unavailable.push(`rule verdicts on ${node}: xtables-monitor --trace did not join the nf_tables trace group`);
    else if (monitors && !traced)
      this.unavailable.push(`rule verdicts on ${node}: its TRACE rules are not nf_tables rules (iptables-legacy?)`);
    // INVALID is conntrack's word: traced only where conntrack already runs, since the match would
    // otherwise switch conntrack on in a node that did without it
    if (conntrack) await target.exec(['iptables-restore', '-w', '--noflush'], { input: invalidTraceRule() });
  }

  /** Resolves once every event the kernel reported before the call has been recorded, or at the deadline. */
  private async flush(deadlineMs: number): Promise<void> {
    const until = performance.now() + deadlineMs;
    const monitors = [...this.nodeMonitors.values()].flatMap((m) => [m.rules, m.events]).filter((m) => m !== undefined);
    await Promise.all([this.drops?.flush(deadlineMs), ...monitors.map((m) => m.flush(until))]);
  }

  /** `waitedMs`: how long the probe waited for the lab's monitors (charged to it). */
  startProbe(flows: TraceFlows, waitedMs: number): ProbeTraceSession {
    const askedAt = performance.now();
    this.probes += 1;
    const watch = new ProbeWatch(
      {
        lab: this.lab,
        events: this.events,
        unavailable: this.unavailable,
        probesStarted: () => this.probes,
        flush: (deadlineMs) => this.flush(deadlineMs),
        release: (w) => this.watches.delete(w),
      },
      { flows, askedAt, waitedMs },
    );
    this.watches.add(watch);
    return watch;
  }
}
