// A probe's diagnosis as a few lines of plain text, for `explain` and the console: the culprit, then
// the sentences that say why, one per line.
import type { ProbeResult } from '../engine/run/results.ts';
import type { CulpritKind } from '../model/diagnosis.ts';

const KIND: Record<CulpritKind, string> = {
  rule: 'rule',
  'bpf-program': 'BPF program',
  kernel: 'kernel',
  socket: 'socket',
};

export function diagnosisLines(probe: Pick<ProbeResult, 'diagnosis' | 'trace'>): string[] {
  const d = probe.diagnosis;
  if (!d) {
    if (!probe.trace) return [];
    const why = probe.trace.unavailable.length ? ` (${probe.trace.unavailable.join('; ')})` : '';
    return [`no culprit found in the trace${why}`];
  }
  const sentences = d.reason.split(/(?<=\.)\s+(?=[A-Zca-z])/).filter(Boolean);
  // a reason that quotes the culprit (a rule's full text) says it once, there
  const text = sentences.some((s) => s.includes(d.culprit.text)) ? '' : `: ${d.culprit.text}`;
  return [`culprit: ${KIND[d.culprit.kind]} ${d.culprit.where} on ${d.culprit.node}${text}`, ...sentences];
}
