// The small surface the engine calls around each probe (marked `probe-trace` in run-scenario.ts):
// start a trace, run the probe with a signal that fires at an attributed drop, stop the trace
// (keeping it only for a faulted or failing probe: one that failed, did not end well, or shows the fault
// although it ended well), and diagnose those probes after the phase's checks.
import type { PhaseResult, ProbeResult } from './results.ts';
import type { Observation } from '../../model/outcome.ts';
import type { ProbeTraceResult, ProbeTraceSession } from '../../model/trace-events.ts';
import { diagnose } from '../../observe/trace/diagnosis.ts';
import { DropWatch } from '../../observe/trace/drop-verdict.ts';

export { probeFlows, startProbeTrace } from '../../observe/trace/start-probe-trace.ts';

export interface TracedProbe {
  /** Runs the probe; `dropped` reports (and signals) the drop the trace attributes to the client's packet. */
  run(probe: (dropped: DropWatch) => Promise<Observation>): Promise<Observation>;
  /** Stops the trace; returns it when `keep` (a faulted or failing probe), else undefined. */
  stop(keep: boolean): Promise<ProbeTraceResult | undefined>;
  /** What tracing added to this probe, ms (after stop). */
  costMs(): number | undefined;
  /** Stops the trace and records it on the probe: the trace itself only for a faulted or failing probe, its cost always. */
  finish(probe: ProbeResult, before?: Before): Promise<void>;
}

/** The same probe earlier in its lab: in the baseline, and (for a fixed phase) in the faulted phase. */
export interface Before {
  baseline?: ProbeResult;
  faulted?: ProbeResult;
}

/**
 * The probe shows the fault although it may have ended well: it observes, or is expected to observe,
 * something else than in its lab's baseline (a masquerade hides the client's address, another backend
 * answers); under a fix, only while it still shows what the faulted phase showed (a control, a fix that
 * leaves this probe be). A fix that changed it is no fault to explain.
 */
export function showsTheFault(probe: ProbeResult, { baseline, faulted }: Before): boolean {
  if (!baseline) return false;
  const view = (p: ProbeResult) =>
    JSON.stringify([p.expected, p.observed, p.detail.servedBy, p.detail.source, p.detail.sentTo, p.detail.connected]);
  return view(probe) !== view(baseline) && (faulted === undefined || view(probe) === view(faulted));
}

export function traceProbe(session: ProbeTraceSession): TracedProbe {
  const dropped = new DropWatch();
  let cost: number | undefined;
  session.onDrop((drop) => dropped.report(drop));
  return {
    async run(probe) {
      try {
        return await probe(dropped);
      } catch (e) {
        await session.stop().catch(() => {});
        throw e;
      }
    },
    async stop(keep) {
      const result = await session.stop({ facts: keep });
      const { lab = 0, start, stop, facts = 0 } = result.costMs;
      cost = result.unavailable.some((u) => u.startsWith('tracing is off') || u.includes('cannot trace'))
        ? undefined
        : lab + start + stop + facts;
      return keep ? result : undefined;
    },
    costMs: () => cost,
    async finish(probe, before = {}) {
      const trace = await this.stop(!probe.matched || probe.observed !== 'ok' || showsTheFault(probe, before));
      if (trace) probe.trace = trace;
      if (cost !== undefined) probe.traceCostMs = cost;
    },
  };
}

/**
 * Adds `diagnosis` to each probe that kept its trace; checks' evidence (e.g. conntrack's log) is cited, and
 * what the same probe observed in `baseline` (its lab's baseline phase) tells what the fault changed.
 */
export function attachDiagnoses(phase: PhaseResult, address: (ref: string) => string, baseline?: PhaseResult): void {
  for (const probe of phase.probes) {
    if (!probe.trace) continue;
    const diagnosis = diagnose({
      probe,
      phase: phase.name,
      checks: phase.checks,
      steps: phase.steps,
      trace: probe.trace,
      address,
      baseline: baseline?.probes.find((b) => b.id === probe.id),
    });
    if (diagnosis) probe.diagnosis = diagnosis;
  }
}
