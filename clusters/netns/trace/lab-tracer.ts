// Traces one probe's packets inside the lab's own namespaces, never the host's:
//  - netfilter rule verdicts with the rule text: `-j TRACE` rules in each node's raw (and mangle) tables, read by
//    `xtables-monitor --trace`. They mark only the packets that decide a connection's fate (SYN, RST, UDP, ICMP,
//    and, where conntrack runs, whatever it calls INVALID), never the data stream, so they stay for the lab's life and a probe
//    costs no iptables call; each probe keeps the events of its own client;
//  - kernel drop reasons: our kfree_skb program (bpf/drop-trace.c), which reports only the lab's namespaces;
//  - conntrack state changes: `conntrack -E` in each node.
// The monitors start once per lab (on the first traced probe) and end with it: they are lab processes
// in lab namespaces, so teardown and `netrepro clean` end them, and the BPF program goes with its loader.
// Readiness and flushing use a marker: a UDP datagram to 127.0.0.1:9 in the node, which each monitor
// sees (traced on lo, a NEW conntrack entry, a NO_SOCKET drop). Never a sleep.
import { stat } from 'node:fs/promises';
import type { ProbeTraceResult, ProbeTraceSession, TraceEvent, TraceFact, TraceFlows } from '../../../harness/model/trace-events.ts';
import { bpfObject } from '../bpf-build.ts';
import { helperBinary } from '../helper-build.ts';
import type { NetnsLab } from '../netns-lab.ts';
import { readTraceFacts } from './trace-facts.ts';
import { parseConntrackLine, parseDropLine, XtablesTraceParser } from './parse-trace-lines.ts';

const COMMENT = 'netrepro-trace';
const MARKER_PORT = 9;
/** Drop reasons that repeat for every retransmission of the same packet: a probe may conclude at once. */
export const DETERMINISTIC_DROPS = new Set(['NETFILTER_DROP', 'IP_OUTNOROUTES', 'IP_INNOROUTES', 'NEIGH_FAILED', 'IP_RPFILTER', 'IP_INVALID_SOURCE']);

type Source = 'rules' | 'drops' | 'conntrack';
type Stamped = TraceEvent & { stamp: number };

const tracers = new WeakMap<NetnsLab, Promise<LabTracer>>();

export async function startNetnsTrace(lab: NetnsLab, flows: TraceFlows, signal?: AbortSignal): Promise<ProbeTraceSession> {
  let tracer = tracers.get(lab);
  if (!tracer) {
    tracer = LabTracer.start(lab, signal);
    tracers.set(lab, tracer);
  }
  return (await tracer).startProbe(flows);
}

class LabTracer {
  private readonly events: Stamped[] = [];
  private readonly listeners = new Set<(e: Stamped) => void>();
  /** Marker sightings per node and source: a barrier waits for the count to rise. */
  private readonly markers = new Map<string, number>();
  /** Sources that saw the first marker: later barriers wait only for those. */
  private readonly live = new Map<string, Set<Source>>();
  readonly unavailable: string[] = [];
  private probes = 0;
  /** ms the lab-wide monitors took to start (charged to the lab's first traced probe). */
  startMs = 0;

  private constructor(private readonly lab: NetnsLab) {}

  static async start(lab: NetnsLab, signal?: AbortSignal): Promise<LabTracer> {
    const tracer = new LabTracer(lab);
    const t0 = performance.now();
    const nodeFailed = (node: string) => (e: unknown) => void tracer.unavailable.push(`rule verdicts and conntrack events on ${node}: ${(e as Error).message.split('\n')[0]}`);
    await Promise.all([tracer.startDrops(), ...lab.nodeNames.map((n) => tracer.startNode(n).catch(nodeFailed(n)))]);
    for (const node of lab.nodeNames) {
      const seen = await tracer.barrier(node, ['rules', 'drops', 'conntrack'], 1500, signal);
      tracer.live.set(node, seen);
      // INVALID is conntrack's word: traced only where conntrack already runs (the marker got an entry),
      // since the match would otherwise switch conntrack on in a node that did without it
      if (seen.has('conntrack')) await lab.node(node).exec(['iptables-restore', '-w', '--noflush'], { input: invalidTraceRule() });
    }
    const anyNode = lab.nodeNames[0];
    const seen = anyNode ? tracer.live.get(anyNode)! : new Set<Source>();
    if (!seen.has('rules')) tracer.unavailable.push('rule verdicts: xtables-monitor --trace printed nothing in the node (no nf_tables trace support?)');
    if (!seen.has('drops') && !tracer.unavailable.some((u) => u.startsWith('kernel drop reasons'))) tracer.unavailable.push('kernel drop reasons: the kfree_skb program reported nothing');
    tracer.startMs = Math.round(performance.now() - t0);
    return tracer;
  }

  private record(event: TraceEvent, source: Source, node: string | undefined): void {
    const marker = event.packet.dst === '127.0.0.1' || event.packet.src === '127.0.0.1';
    if (marker) {
      if (node && (event.packet.dport === MARKER_PORT || event.kind === 'conntrack')) this.markers.set(`${node}/${source}`, (this.markers.get(`${node}/${source}`) ?? 0) + 1);
      return;
    }
    const stamped = { ...event, stamp: performance.now() };
    this.events.push(stamped);
    for (const l of this.listeners) l(stamped);
  }

  private async startDrops(): Promise<void> {
    try {
      const [bin, object] = await Promise.all([helperBinary('drop-trace'), bpfObject('drop-trace')]);
      const where = new Map<number, string>();
      const add = async (ns: string, ref: string) => where.set((await stat(this.lab.names.netnsPath(ns))).ino, ref);
      const names = this.lab.names;
      await Promise.all([
        add(names.fabric, 'fabric'),
        ...this.lab.topology.nodes.map((n) => add(names.node(n.name), `node/${n.name}`)),
        ...this.lab.topology.pods.map((p) => add(names.pod(p.name), `pod/${p.name}`)),
        ...this.lab.topology.hosts.map((h) => add(names.host(h.name), `host/${h.name}`)),
      ]);
      const nodeOf = new Map([...where].map(([inum, ref]) => [inum, ref.startsWith('node/') ? ref.slice(5) : undefined]));
      // runs in the fabric namespace: a lab process, ended by teardown and by `netrepro clean`
      const loader = this.lab.namespaceTarget(names.fabric).spawn([bin, object, ...[...where.keys()].map(String)]);
      this.lab.processes.push(loader);
      loader.onLine((line) => {
        const event = parseDropLine(line, 0, (inum) => where.get(inum));
        if (event) this.record(event, 'drops', nodeOf.get(Number(/ns=(\d+)/.exec(line)?.[1])));
      });
      await loader.waitFor(/^ready$/, 10_000);
    } catch (e) {
      this.unavailable.push(`kernel drop reasons: ${(e as Error).message.split('\n')[0]}`);
    }
  }

  private async startNode(node: string): Promise<void> {
    const target = this.lab.node(node);
    const xtables = target.spawn(['xtables-monitor', '--trace']);
    const conntrack = target.spawn(['conntrack', '-E']);
    this.lab.processes.push(xtables, conntrack);
    const parser = new XtablesTraceParser(node);
    xtables.onLine((line) => {
      const event = parser.feed(line, 0);
      if (event) this.record(event, 'rules', node);
    });
    conntrack.onLine((line) => {
      const event = parseConntrackLine(line, 0, node);
      if (event) this.record(event, 'conntrack', node);
    });
    await target.exec(['iptables-restore', '-w', '--noflush'], { input: labTraceRules() });
  }

  /** Sends markers in `node` until every source in `wanted` has seen one (or the deadline): returns the sources that did. */
  private async barrier(node: string, wanted: Source[], deadlineMs: number, signal?: AbortSignal): Promise<Set<Source>> {
    const before = new Map(wanted.map((s) => [s, this.markers.get(`${node}/${s}`) ?? 0]));
    const seen = () => new Set(wanted.filter((s) => (this.markers.get(`${node}/${s}`) ?? 0) > before.get(s)!));
    const until = performance.now() + deadlineMs;
    // conntrack reports the marker with the others, or never (not in use in this node): once the
    // other sources have it, give conntrack 50 ms more, not the whole deadline
    const others = wanted.filter((s) => s !== 'conntrack');
    let othersAt: number | undefined;
    while (performance.now() < until && !signal?.aborted) {
      await this.lab.node(node).exec(['bash', '-c', `echo > /dev/udp/127.0.0.1/${MARKER_PORT}`], { reject: false });
      for (let i = 0; i < 5 && seen().size < wanted.length; i++) await new Promise((r) => setTimeout(r, 5));
      if (seen().size === wanted.length) break;
      if (others.every((o) => seen().has(o))) {
        othersAt ??= performance.now();
        if (performance.now() - othersAt > 50) break;
      }
    }
    return seen();
  }

  async startProbe(flows: TraceFlows): Promise<ProbeTraceSession> {
    const t0 = performance.now();
    this.probes += 1;
    const start = performance.now();
    const startedAt = Date.now();
    let fired = false;
    const dropListeners: ((e: Extract<TraceEvent, { kind: 'rule' | 'drop' }>) => void)[] = [];
    // a TCP drop counts only for a connection this probe opened: an earlier probe's connection may still
    // be retransmitting into the same DROP rule (its curl was stopped, its socket lingers)
    const opened = new Set<number>();
    const onEvent = (e: Stamped) => {
      if (e.kind === 'rule' && e.packet.src === flows.client && e.packet.flags === 'SYN' && e.packet.sport !== undefined) opened.add(e.packet.sport);
      if (fired || !attributedDrop(e, flows) || (e.packet.proto === 'tcp' && !opened.has(e.packet.sport ?? -1))) return;
      fired = true;
      for (const l of dropListeners) l(relative(e, start) as Extract<TraceEvent, { kind: 'rule' | 'drop' }>);
    };
    this.listeners.add(onEvent);
    let stopped: Promise<ProbeTraceResult> | undefined;
    return {
      onDrop: (listener) => void dropListeners.push(listener),
      stop: (options) =>
        (stopped ??= (async () => {
          const t1 = performance.now();
          // flush: whatever the monitors still had in flight arrives before the marker. Only for a probe
          // whose trace is kept: a probe that ended well drops its trace, so it skips the wait.
          if (options?.facts) await Promise.all(this.lab.nodeNames.map((n) => this.barrier(n, [...(this.live.get(n) ?? [])], 500)));
          this.listeners.delete(onEvent);
          const events = this.events.filter((e) => e.stamp >= start && relevant(e, flows)).map((e) => relative(e, start));
          const t2 = performance.now();
          const facts: TraceFact[] = options?.facts ? await readTraceFacts(this.lab).catch(() => []) : [];
          const lab = this.probes === 1 ? { lab: this.startMs } : {};
          const costMs = { ...lab, start: Math.round(start - t0), stop: Math.round(t2 - t1), ...(options?.facts ? { facts: Math.round(performance.now() - t2) } : {}) };
          return { startedAt, flows, events, facts, unavailable: [...this.unavailable], costMs };
        })()),
    };
  }
}

function relative(e: Stamped, start: number): TraceEvent {
  const { stamp, ...event } = e;
  return { ...event, at: Math.round((stamp - start) * 10) / 10 } as TraceEvent;
}

const touches = (p: { src: string; dst: string }, flows: TraceFlows) => p.src === flows.client || p.dst === flows.client;

/** Events about this probe's packets (other probes of the lab do not overlap in time, but stray traffic might). */
function relevant(e: TraceEvent, flows: TraceFlows): boolean {
  if (e.kind === 'conntrack') return touches(e.packet, flows) || touches(e.reply, flows);
  return touches(e.packet, flows);
}

/** A packet the client sent, dropped by a rule or for a reason that repeats for every retransmission. */
function attributedDrop(e: TraceEvent, flows: TraceFlows): boolean {
  // a REJECT answers the client (RST or ICMP): that answer decides the outcome, not a drop verdict
  if (e.kind === 'rule') return e.verdict === 'DROP' && e.packet.src === flows.client;
  if (e.kind === 'drop') return DETERMINISTIC_DROPS.has(e.reason) && e.packet.src === flows.client;
  return false;
}

/**
 * iptables-restore input for the lab's TRACE rules (one node). Each marks a packet for nf_tables tracing
 * through every later table; the data segments of a transfer are never marked, unless INVALID.
 */
export function labTraceRules(): string {
  const rule = (chain: string, spec: string) => `-A ${chain} ${spec} -m comment --comment ${COMMENT} -j TRACE`;
  // raw runs before conntrack and needs none: these rules change nothing in how the node handles packets
  return [
    '*raw',
    // the readiness and flush marker: a datagram to 127.0.0.1:9 on lo
    rule('OUTPUT', `-o lo -p udp --dport ${MARKER_PORT}`),
    rule('PREROUTING', '-p tcp --syn'),
    rule('PREROUTING', '-p tcp --tcp-flags RST RST'),
    // not VXLAN (flannel 8472, IANA 4789): its outer datagrams carry every inner packet, the data stream too
    rule('PREROUTING', '-p udp -m multiport ! --dports 4789,8472'),
    rule('PREROUTING', '-p icmp'),
    'COMMIT',
    '',
  ].join('\n');
}

/** After conntrack: what it could not place (the ACK after a reply it never saw, a segment out of window). */
export function invalidTraceRule(): string {
  return `*mangle\n-A PREROUTING -m conntrack --ctstate INVALID -m comment --comment ${COMMENT} -j TRACE\nCOMMIT\n`;
}
