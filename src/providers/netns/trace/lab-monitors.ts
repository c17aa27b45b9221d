// The lab's trace sources and the events they record, for every probe of the lab (lab-tracer.ts says what is
// traced and when the monitors start): the drop filter's lines, and per node xtables-monitor --trace and
// conntrack -E with the raw table's TRACE rules. A probe's trace is the events of its own client between
// its start and its stop.
//
// An ICMP error the node sends and drops (frag-needed dropped in OUTPUT: an MTU black hole) is about
// another packet: the kernel drop carries the header it quotes, and the rule verdicts of the same packet
// (xtables-monitor prints no ICMP header for it) are given that header, so the drop is attributed to the
// probe whose flow it is about, with the rule that dropped it.
import { stat } from 'node:fs/promises';
import { ProbeFlow } from '../../../model/probe-flow.ts';
import type {
  DropCause,
  ProbeTraceResult,
  ProbeTraceSession,
  TraceEvent,
  TraceFact,
  TraceFlows,
} from '../../../model/trace-events.ts';
import { explainable, readDropCause } from './drop-cause.ts';
import { NetlinkMonitor } from './netlink-monitor.ts';
import { parseConntrackLine, parseDropLine, XtablesTraceParser } from './parse-trace-lines.ts';
import { watchDrops, type DropWatch } from './shared-drop-trace.ts';
import { readTraceFacts } from './trace-facts.ts';
import { invalidTraceRule, labTraceRules, readTraceRuleset } from './trace-rules.ts';
import type { TracedLab } from './traced-lab.ts';

/**
 * Drop reasons that repeat for every retransmission of the same packet: a probe may conclude at once. Not
 * NEIGH_FAILED: before the kernel frees a packet whose neighbour never answered it sends the sender ICMP
 * host-unreachable (arp_error_report -> ipv4_link_failure), and that answer, on the client's own wire,
 * decides; a verdict called at the drop would race it (the ICMP's trace can lag the drop's by 100 ms).
 */
const DETERMINISTIC_DROPS = new Set([
  'NETFILTER_DROP',
  'IP_OUTNOROUTES',
  'IP_INNOROUTES',
  'IP_RPFILTER',
  'IP_INVALID_SOURCE',
]);

type Stamped = TraceEvent & { stamp: number };

/** nf_tables trace events (NFNLGRP_NFTRACE, group 9) and conntrack events (NFNLGRP_CONNTRACK_NEW..DESTROY, 1-3): the Groups bits a monitor's socket joins. */
const GROUPS = { rules: 1 << 8, conntrack: 0b111 };

export class LabMonitors {
  private readonly events: Stamped[] = [];
  private readonly listeners = new Set<(e: Stamped) => void>();
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
    for (const l of this.listeners) l(stamped);
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
  async startProbe(flows: TraceFlows, waitedMs: number): Promise<ProbeTraceSession> {
    const t0 = performance.now();
    this.probes += 1;
    const start = performance.now();
    const startedAt = Date.now();
    let fired = false;
    const dropListeners: ((e: Extract<TraceEvent, { kind: 'rule' | 'drop' }>) => void)[] = [];
    // a drop counts only for a flow this probe opened: an earlier probe's connection may still be
    // retransmitting into the same DROP rule (its curl was stopped, its socket lingers), and an earlier
    // probe's datagram may be dropped late (a neighbour that gives up)
    const opened = new Set<number>();
    let explaining = false;
    const causes: Promise<unknown>[] = [];
    const fire = (e: Stamped) => {
      if (fired) return;
      fired = true;
      for (const l of dropListeners) l(relative(e, start) as Extract<TraceEvent, { kind: 'rule' | 'drop' }>);
    };
    /** Reads the state behind a drop right at the drop, one read at a time (a retransmission brings the same drop again). */
    const explain = (e: Stamped & { kind: 'drop' }, then?: (cause: DropCause | undefined) => void) => {
      if (explaining) return;
      explaining = true;
      const explained = readDropCause(this.lab.target(e.where), e)
        .catch(() => undefined)
        .then((cause) => {
          explaining = false;
          if (cause) e.cause = cause;
          then?.(cause);
        });
      causes.push(explained);
    };
    // a drop can arrive before the trace of its connection's SYN (two monitors, two pipes; a rule verdict on
    // the node after a masquerade comes from another node's monitor): it waits for that SYN
    const beforeItsSyn = new Map<number, Stamped[]>();
    // the flow as each node sees it: a node that masquerades sends the client's packets on under its own
    // address, and conntrack's event that says so can arrive after the next node's drop: such drops wait for it
    const flow = new ProbeFlow(flows.client);
    const unplaced: Stamped[] = [];
    const onEvent = (e: Stamped) => {
      if (e.kind === 'conntrack' && flow.learn(e)) for (const waiting of unplaced.splice(0)) onEvent(waiting);
      // what this probe opened: a TCP connection by its SYN, a UDP flow by a datagram the client sent since the
      // probe started (a datagram of an earlier probe, dropped late, is not this probe's)
      const opens =
        e.kind === 'rule' &&
        e.packet.src === flows.client &&
        e.packet.sport !== undefined &&
        (e.packet.flags === 'SYN' || e.packet.proto === 'udp');
      if (opens && e.packet.sport !== undefined) {
        opened.add(e.packet.sport);
        const early = beforeItsSyn.get(e.packet.sport) ?? [];
        beforeItsSyn.delete(e.packet.sport);
        for (const drop of early) if (!fired) consider(drop);
      }
      const clientPort = flow.clientPort(e.packet);
      if (fired) return;
      if (!attributedDrop(e, flow)) {
        if (e.kind === 'drop' && explainable(e) && flow.concerns(e.packet))
          explain(e); // named in the diagnosis, not called
        else if (e.kind !== 'conntrack' && (e.kind === 'drop' || e.verdict === 'DROP') && !flow.concerns(e.packet)) {
          unplaced.push(e);
          if (unplaced.length > 64) unplaced.shift();
        }
        return;
      }
      const proto = (e.packet.inner ?? e.packet).proto;
      if ((proto === 'tcp' || proto === 'udp') && !opened.has(clientPort ?? -1)) {
        const early = clientPort === undefined ? undefined : (beforeItsSyn.get(clientPort) ?? []);
        if (early && early.length < 8) beforeItsSyn.set(clientPort!, [...early, e]);
        return;
      }
      consider(e);
    };
    /** An attributed drop of this probe's own flow: call it now, after its rule verdict or state, or not at all. */
    const consider = (e: Stamped) => {
      if (e.kind === 'drop' && e.packet.inner) {
        // an ICMP error dropped by a rule: name the rule (its verdict has the quoted header by now, or soon)
        const verdict = () =>
          this.events.findLast((x) => x.kind === 'rule' && x.verdict === 'DROP' && x.packet === e.packet);
        const named = verdict();
        if (named) return fire(named);
        setTimeout(() => fire(verdict() ?? e), 30);
        return;
      }
      if (e.kind === 'drop' && explainable(e)) {
        // the namespace's state says why: a reason that repeats for every retransmission is called now and its
        // state read for the diagnosis; a bridge drop is called only when the state explains it; a failed
        // neighbour is named for the diagnosis, never called: it is no silent drop (DETERMINISTIC_DROPS)
        if (DETERMINISTIC_DROPS.has(e.reason)) fire(e);
        explain(e, (cause) => e.reason === 'NOT_SPECIFIED' && cause && fire(e));
        return;
      }
      if (e.kind === 'drop' && e.reason === 'NETFILTER_DROP' && e.where.startsWith('node/')) {
        // a node's rule did it: its verdict names the rule (and fires by itself when it is a DROP), or it
        // was a REJECT, whose RST or ICMP answers the client: then there is no drop to call
        const rejected = () =>
          this.events.some(
            (x) => x.kind === 'rule' && `node/${x.node}` === e.where && isReject(x) && samePacket(x.packet, e.packet),
          );
        setTimeout(() => !rejected() && fire(e), 30);
        return;
      }
      fire(e);
    };
    this.listeners.add(onEvent);
    let stopped: Promise<ProbeTraceResult> | undefined;
    return {
      onDrop: (listener) => void dropListeners.push(listener),
      stop: (options) =>
        (stopped ??= (async () => {
          const t1 = performance.now();
          // the facts (settings and programs: what the phase's steps made, not the traffic) are read
          // while the flush waits, not after it
          const reading = options?.facts ? readTraceFacts(this.lab).catch((): TraceFact[] => []) : undefined;
          // flush: whatever the sources still had in flight is recorded. Only for a probe whose trace
          // is kept: a probe that ended well drops its trace, so it skips the wait.
          if (options?.facts) await this.flush(500);
          this.listeners.delete(onEvent);
          await Promise.all(causes); // a drop's cause, read from the node, belongs to the events kept
          const during = this.events.filter((e) => e.stamp >= start);
          const followed = ProbeFlow.of(flows.client, during);
          const events = during.filter((e) => relevant(e, followed)).map((e) => relative(e, start));
          const t2 = performance.now();
          const facts: TraceFact[] = (await reading) ?? [];
          const lab = this.probes === 1 ? { lab: waitedMs } : {};
          // facts: how much longer than the flush the facts took
          const costMs = {
            ...lab,
            start: Math.round(start - t0),
            stop: Math.round(t2 - t1),
            ...(options?.facts ? { facts: Math.round(performance.now() - t2) } : {}),
          };
          return { startedAt, flows, events, facts, unavailable: [...this.unavailable], costMs };
        })()),
    };
  }
}

function relative(e: Stamped, start: number): TraceEvent {
  const { stamp, ...event } = e;
  return { ...event, at: Math.round((stamp - start) * 10) / 10 } as TraceEvent;
}

/** Events about this probe's packets, on every node they crossed (other probes of the lab do not overlap in time, but stray traffic might). */
function relevant(e: TraceEvent, flow: ProbeFlow): boolean {
  if (e.kind === 'conntrack') return flow.concerns(e.packet) || flow.concerns(e.reply);
  return flow.concerns(e.packet);
}

/**
 * A packet the client sent (or a node's NAT sent on for it), dropped by a rule or for a reason that repeats
 * for every retransmission (or a node's drop its state may explain: drop-cause.ts); or an ICMP error about
 * the client's flow dropped that way (frag-needed dropped: every full-size segment the peer retransmits
 * brings the same error, dropped again: an MTU black hole).
 */
function attributedDrop(e: TraceEvent, flow: ProbeFlow): boolean {
  if (e.kind === 'conntrack') return false;
  const inner = e.packet.inner;
  const ours = flow.outbound(e.packet) !== undefined || (inner !== undefined && flow.concerns(inner));
  // a REJECT answers the client (RST or ICMP): that answer decides the outcome, not a drop verdict
  if (e.kind === 'rule') return e.verdict === 'DROP' && !isReject(e) && ours;
  return (DETERMINISTIC_DROPS.has(e.reason) || explainable(e)) && ours;
}

/** nf_tables traces a REJECT rule with a drop verdict (and the kernel frees the packet as NETFILTER_DROP): its target says what it is. */
function isReject(e: Extract<TraceEvent, { kind: 'rule' }>): boolean {
  return e.target === 'REJECT' || / -j REJECT\b/.test(e.rule ?? '');
}

const samePacket = (a: TraceEvent['packet'], b: TraceEvent['packet']): boolean =>
  a.proto === b.proto && a.src === b.src && a.dst === b.dst && a.sport === b.sport && a.dport === b.dport;
