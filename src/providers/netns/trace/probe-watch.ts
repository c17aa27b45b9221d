// One probe's part of the lab's trace: it sees every event the lab's monitors record while the probe runs,
// follows the probe's flow through the nodes that masquerade it (model/probe-flow.ts), calls the first drop
// of that flow to its listeners (so the probe can end at once), and at its stop keeps the events of the flow
// on every node it crossed, with the facts its path depended on.
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
import { relative, type Stamped } from './stamped-event.ts';
import { readTraceFacts } from './trace-facts.ts';
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

type Dropped = Extract<TraceEvent, { kind: 'rule' | 'drop' }>;

/** What a probe's watch reads of the lab's monitors. */
export interface WatchedMonitors {
  readonly lab: TracedLab;
  /** Every event recorded so far, in arrival order. */
  readonly events: readonly Stamped[];
  /** Parts of the trace that are missing, with why. */
  readonly unavailable: readonly string[];
  /** Probes traced in the lab so far: the first is charged the wait for the monitors. */
  probesStarted(): number;
  /** Resolves once every event the kernel reported before the call has been recorded, or at the deadline. */
  flush(deadlineMs: number): Promise<void>;
  /** The watch sees no more events. */
  release(watch: ProbeWatch): void;
}

export interface ProbeWatchOptions {
  flows: TraceFlows;
  /** When the probe asked for its trace (performance.now()). */
  askedAt: number;
  /** How long the probe waited for the lab's monitors. */
  waitedMs: number;
}

export class ProbeWatch implements ProbeTraceSession {
  private readonly flows: TraceFlows;
  private readonly askedAt: number;
  private readonly waitedMs: number;
  /** performance.now() and the wall clock at the start: events are kept from here on. */
  private readonly start = performance.now();
  private readonly startedAt = Date.now();
  private readonly dropListeners: ((drop: Dropped) => void)[] = [];
  /** A drop was called: the listeners hear one, once. */
  private fired = false;
  /**
   * Client ports of the flows this probe opened: a drop counts only for one of them. An earlier probe's connection
   * may still be retransmitting into the same DROP rule (its curl was stopped, its socket lingers), and an earlier
   * probe's datagram may be dropped late (a neighbour that gives up).
   */
  private readonly opened = new Set<number>();
  /**
   * A drop can arrive before the trace of its connection's SYN (two monitors, two pipes; a rule verdict on the
   * node after a masquerade comes from another node's monitor): it waits for that SYN, up to 8 per port.
   */
  private readonly beforeItsSyn = new Map<number, Stamped[]>();
  /** The flow as each node sees it: a node that masquerades sends the client's packets on under its own address. */
  private readonly flow: ProbeFlow;
  /**
   * Drops not (yet) of the flow: conntrack's event that says a node masqueraded it can arrive after the next
   * node's drop; such drops wait for it (the last 64).
   */
  private readonly unplaced: Stamped[] = [];
  /** A namespace's state is being read for a drop: one read at a time (a retransmission brings the same drop again). */
  private explaining = false;
  /** The reads of drops' causes: the events kept wait for them. */
  private readonly causes: Promise<unknown>[] = [];
  private stopped: Promise<ProbeTraceResult> | undefined;

  constructor(
    private readonly monitors: WatchedMonitors,
    options: ProbeWatchOptions,
  ) {
    this.flows = options.flows;
    this.askedAt = options.askedAt;
    this.waitedMs = options.waitedMs;
    this.flow = new ProbeFlow(options.flows.client);
  }

  onDrop(listener: (drop: Dropped) => void): void {
    this.dropListeners.push(listener);
  }

  /** Every event the monitors record while the probe runs. */
  see(e: Stamped): void {
    const client = this.flows.client;
    if (e.kind === 'conntrack' && this.flow.learn(e)) for (const waiting of this.unplaced.splice(0)) this.see(waiting);
    // what this probe opened: a TCP connection by its SYN, a UDP flow by a datagram the client sent since the
    // probe started (a datagram of an earlier probe, dropped late, is not this probe's)
    const opens =
      e.kind === 'rule' &&
      e.packet.src === client &&
      e.packet.sport !== undefined &&
      (e.packet.flags === 'SYN' || e.packet.proto === 'udp');
    if (opens && e.packet.sport !== undefined) {
      this.opened.add(e.packet.sport);
      const early = this.beforeItsSyn.get(e.packet.sport) ?? [];
      this.beforeItsSyn.delete(e.packet.sport);
      for (const drop of early) if (!this.fired) this.consider(drop);
    }
    const clientPort = this.flow.clientPort(e.packet);
    if (this.fired) return;
    if (!attributedDrop(e, this.flow)) {
      if (e.kind === 'drop' && explainable(e) && this.flow.concerns(e.packet))
        this.explain(e); // named in the diagnosis, not called
      else if (e.kind !== 'conntrack' && (e.kind === 'drop' || e.verdict === 'DROP') && !this.flow.concerns(e.packet)) {
        this.unplaced.push(e);
        if (this.unplaced.length > 64) this.unplaced.shift();
      }
      return;
    }
    const proto = (e.packet.inner ?? e.packet).proto;
    if ((proto === 'tcp' || proto === 'udp') && !this.opened.has(clientPort ?? -1)) {
      const early = clientPort === undefined ? undefined : (this.beforeItsSyn.get(clientPort) ?? []);
      if (early && early.length < 8) this.beforeItsSyn.set(clientPort!, [...early, e]);
      return;
    }
    this.consider(e);
  }

  stop(options?: { facts?: boolean }): Promise<ProbeTraceResult> {
    this.stopped ??= this.collect(options?.facts === true);
    return this.stopped;
  }

  /** An attributed drop of this probe's own flow: call it now, after its rule verdict or state, or not at all. */
  private consider(e: Stamped): void {
    const events = this.monitors.events;
    if (e.kind === 'drop' && e.packet.inner) {
      // an ICMP error dropped by a rule: name the rule (its verdict has the quoted header by now, or soon)
      const verdict = () => events.findLast((x) => x.kind === 'rule' && x.verdict === 'DROP' && x.packet === e.packet);
      const named = verdict();
      if (named) this.fire(named);
      else setTimeout(() => this.fire(verdict() ?? e), 30);
      return;
    }
    if (e.kind === 'drop' && explainable(e)) {
      // the namespace's state says why: the drop is called now and its state read for the diagnosis; a bridge
      // drop is called only when the state explains it; a failed neighbour is named for the diagnosis, never
      // called: it is no silent drop (DETERMINISTIC_DROPS)
      if (e.reason !== 'NEIGH_FAILED' && e.reason !== 'NOT_SPECIFIED') this.fire(e);
      this.explain(e, (cause) => e.reason === 'NOT_SPECIFIED' && cause && this.fire(e));
      return;
    }
    if (e.kind === 'drop' && e.reason === 'NETFILTER_DROP' && e.where.startsWith('node/')) {
      // a node's rule did it: its verdict names the rule (and fires by itself when it is a DROP), or it
      // was a REJECT, whose RST or ICMP answers the client: then there is no drop to call
      const rejected = () =>
        events.some(
          (x) => x.kind === 'rule' && `node/${x.node}` === e.where && isReject(x) && samePacket(x.packet, e.packet),
        );
      setTimeout(() => !rejected() && this.fire(e), 30);
      return;
    }
    this.fire(e);
  }

  /** Reads the state behind a drop right at the drop, one read at a time (a retransmission brings the same drop again). */
  private explain(e: Stamped & { kind: 'drop' }, then?: (cause: DropCause | undefined) => void): void {
    if (this.explaining) return;
    this.explaining = true;
    const explained = readDropCause(this.monitors.lab.target(e.where), e)
      .catch(() => undefined)
      .then((cause) => {
        this.explaining = false;
        if (cause) e.cause = cause;
        then?.(cause);
      });
    this.causes.push(explained);
  }

  private fire(e: Stamped): void {
    if (this.fired) return;
    this.fired = true;
    for (const l of this.dropListeners) l(relative(e, this.start) as Dropped);
  }

  private async collect(facts: boolean): Promise<ProbeTraceResult> {
    const t1 = performance.now();
    // the facts (settings and programs: what the phase's steps made, not the traffic) are read
    // while the flush waits, not after it
    const reading = facts ? readTraceFacts(this.monitors.lab).catch((): TraceFact[] => []) : undefined;
    // flush: whatever the sources still had in flight is recorded. Only for a probe whose trace
    // is kept: a probe that ended well drops its trace, so it skips the wait.
    if (facts) await this.monitors.flush(500);
    this.monitors.release(this);
    await Promise.all(this.causes); // a drop's cause, read from the node, belongs to the events kept
    const during = this.monitors.events.filter((e) => e.stamp >= this.start);
    const followed = ProbeFlow.of(this.flows.client, during);
    const events = during.filter((e) => relevant(e, followed)).map((e) => relative(e, this.start));
    const t2 = performance.now();
    const read: TraceFact[] = (await reading) ?? [];
    const lab = this.monitors.probesStarted() === 1 ? { lab: this.waitedMs } : {};
    // facts: how much longer than the flush the facts took
    const costMs = {
      ...lab,
      start: Math.round(this.start - this.askedAt),
      stop: Math.round(t2 - t1),
      ...(facts ? { facts: Math.round(performance.now() - t2) } : {}),
    };
    return {
      startedAt: this.startedAt,
      flows: this.flows,
      events,
      facts: read,
      unavailable: [...this.monitors.unavailable],
      costMs,
    };
  }
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
