// A probe's diagnosis as a few lines of plain text, for `explain`, the console and the HTML report: the
// culprit, the sentences that say why, one per line, then the state behind it as each command printed it.
import type { ProbeResult } from '../engine/run/results.ts';
import type { CulpritKind, Diagnosis } from '../model/diagnosis.ts';

const KIND: Record<CulpritKind, string> = {
  rule: 'rule',
  'bpf-program': 'BPF program',
  kernel: 'kernel',
  socket: 'socket',
  conntrack: 'conntrack',
};

/** The culprit, the sentences, then the state behind it (`evidence: false` leaves that to the caller: the HTML report sets it apart). */
export function diagnosisLines(
  probe: Pick<ProbeResult, 'diagnosis' | 'trace'>,
  { evidence = true }: { evidence?: boolean } = {},
): string[] {
  const d = probe.diagnosis;
  if (!d) {
    if (!probe.trace) return [];
    const why = probe.trace.unavailable.length ? ` (${probe.trace.unavailable.join('; ')})` : '';
    return [`no culprit found in the trace${why}`];
  }
  const sentences = d.reason.split(/(?<=\.)\s+(?=[A-Zca-z])/).filter(Boolean);
  // a reason that quotes the culprit (a rule's full text) says it once, there
  const text = sentences.some((s) => s.includes(d.culprit.text)) ? '' : `: ${d.culprit.text}`;
  return [
    `culprit: ${KIND[d.culprit.kind]} ${d.culprit.where} on ${d.culprit.node}${text}`,
    ...sentences,
    ...(evidence ? evidenceLines(d) : []),
  ];
}

/** The state behind the culprit as each command printed it: `$ node/node-b: ip -4 route get ...`, then its output indented. */
export function evidenceLines(d: Pick<Diagnosis, 'evidence'>): string[] {
  return (d.evidence ?? []).flatMap((r) => [
    `$ ${r.where}: ${r.command}`,
    ...r.output.split('\n').map((l) => `  ${l}`),
  ]);
}
