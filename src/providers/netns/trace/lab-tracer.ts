// Traces one probe's packets inside the lab's own namespaces, never the host's:
//  - netfilter rule verdicts with the rule text: `-j TRACE` rules in each node's raw (and mangle) tables, read by
//    `xtables-monitor --trace`. They mark only the packets that decide a connection's fate (SYN, RST, UDP, ICMP,
//    and, where conntrack runs, whatever it calls INVALID), never the data stream, so they stay for the lab's life and a probe
//    costs no iptables call; each probe keeps the events of its own client;
//  - kernel drop reasons: our kfree_skb program (bpf/drop-trace.c), which reports only the labs' namespaces;
//    one loader per process serves every lab (shared-drop-trace.ts), the lab's namespaces in its filter;
//  - conntrack state changes: `conntrack -E` in each node; an entry whose reply goes to another address than
//    the client's (a masquerade) says what that node sent on, so the probe's packets are followed to the
//    next node under their new address (model/probe-flow.ts).
// The monitors start once per lab, in the background as soon as its namespaces exist (startMonitors), and
// are ready once its nodes have booted (prepare), so the first probe finds them running; they end with the lab: lab processes in lab namespaces, so teardown and
// `netrepro clean` end them. Nothing of the trace puts a packet into the lab: a monitor is ready when its
// netlink socket has joined the trace or conntrack group (/proc/PID/net/netlink); the booted node's
// ruleset (iptables-save) says whether its verdicts are traced and whether conntrack runs there; a kept
// trace is flushed by asking each source: the drop loader answers a request once it has printed every
// drop queued before it, and each monitor once the kernel shows it has handled all it was sent
// (netlink-monitor.ts). Never a sleep.
import { awaitedLater } from '../../../contract/awaited-later.ts';
import { HarnessError } from '../../../model/errors.ts';
import { tracingEnabled, type ProbeTraceSession, type TraceFlows } from '../../../model/trace-events.ts';
import { LabMonitors } from './lab-monitors.ts';
import type { TracedLab } from './traced-lab.ts';

/** One lab's probe trace: created with the lab, started by its provisioning, asked by each probe. */
export class LabTracer {
  /** Its monitors, once the lab's namespaces exist (startMonitors). */
  private monitors: LabMonitors | undefined;
  /** The monitors once each booted node's ruleset is read: what a probe waits for. */
  private ready: Promise<LabMonitors> | undefined;

  constructor(private readonly lab: TracedLab) {}

  /**
   * Starts the lab's monitors in the background as soon as its namespaces exist (not with NETREPRO_TRACE=0):
   * the drop filter, xtables-monitor and conntrack -E and the raw table's TRACE rules need nothing else,
   * so they get ready while the lab is wired and boots. Provisioning awaits `settle` before it
   * tears down a lab that failed, so nothing is started behind the teardown.
   */
  startMonitors(): void {
    if (tracingEnabled() && !this.monitors) this.monitors = new LabMonitors(this.lab);
  }

  /** What each booted node's ruleset decides (are its verdicts traced, does conntrack run: then INVALID is traced): provisioning calls it once the lab has booted. */
  prepare(): void {
    if (tracingEnabled()) void this.whenReady();
  }

  /** Waits for whatever the lab's trace is still starting (a lab that failed is then torn down). */
  async settle(): Promise<void> {
    await Promise.allSettled([this.monitors?.begun, this.ready]);
  }

  /** Traces one probe's packets; the first probe waits for the monitors to be ready. */
  async startProbe(flows: TraceFlows, signal?: AbortSignal): Promise<ProbeTraceSession> {
    const t0 = performance.now();
    // the first probe waits for the lab's monitors (subscriptions of up to 1 s, each node's ruleset read): an abort (Ctrl-C) does not
    let onAbort = () => {};
    const aborted = awaitedLater(
      new Promise<never>(
        (_, reject) => (onAbort = () => reject(new HarnessError('ABORTED', 'aborted while the probe trace started'))),
      ),
    );
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const monitors = await Promise.race([this.whenReady(), aborted]).finally(() =>
      signal?.removeEventListener('abort', onAbort),
    );
    return monitors.startProbe(flows, Math.round(performance.now() - t0));
  }

  private whenReady(): Promise<LabMonitors> {
    if (!this.ready) {
      this.startMonitors();
      // awaited by the first probe, which then runs untraced and says why
      this.ready = awaitedLater(this.monitors!.complete());
    }
    return this.ready;
  }
}
