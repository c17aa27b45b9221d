// `netrepro explain`: the diagnosis of one run, phase by phase, with the evidence behind each verdict:
// what the client saw on its own interface, what the node captured, what conntrack holds; then, last, each
// distinct culprit once with its whole story and the probes it explains.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunResult } from '../engine/run/results.ts';
import { diagnosisLines } from './diagnosis-lines.ts';

const read = (file: string) => readFile(file, 'utf8').catch(() => '');

/** `evidenceKept`: false when the evidence directory is removed afterwards, so its path is not printed. */
export async function explain(
  jsonReport: string,
  { evidenceKept = true }: { evidenceKept?: boolean } = {},
): Promise<string> {
  const result = JSON.parse(await readFile(jsonReport, 'utf8')) as RunResult;
  const out: string[] = [];
  for (const s of result.scenarios) {
    const culprits = new Map<string, { story: string[]; where: string[] }>();
    out.push(`\n${s.id}: ${s.verdict}`, `  ${s.title}`);
    if (s.error) out.push(`  error: ${s.error.message}`);
    for (const phase of s.phases) {
      out.push(`\n  ${phase.name} (${phase.variant})${phase.title ? `: ${phase.title}` : ''}`);
      for (const step of phase.steps) out.push(`    $ ${step.on}: ${step.argv.join(' ')}`);
      for (const probe of phase.probes) {
        out.push(
          `    ${probe.matched ? 'held' : 'DID NOT HOLD'}: ${probe.id} expects ${probe.expected}`,
          `      observed: ${probe.summary}`,
        );
        if (!probe.matched) out.push(`      why: ${probe.mismatch}`);
        const diagnosis = diagnosisLines(probe);
        if (diagnosis.length) {
          // the same culprit in every fix variant and phase: its story once, at the end
          const culprit = culprits.get(diagnosis[0]!) ?? { story: diagnosis, where: [] };
          culprits.set(diagnosis[0]!, culprit);
          culprit.where.push(`${phase.name} (${phase.variant}) ${probe.id}`);
          out.push(`      diagnosis: ${diagnosis[0]} (told below)`);
        }
        const packets = (probe.detail.packets as string[] | undefined) ?? [];
        if (packets.length && probe.observed !== 'ok')
          out.push("      on the client's eth0:", ...packets.slice(0, 8).map((l) => `        ${l}`));
      }
      for (const check of phase.checks ?? []) {
        out.push(
          `    ${!check.matched ? 'DID NOT HOLD' : check.reported ? 'reported' : 'held'}: check ${check.id} on ${check.on} ${check.reported ? 'reports' : 'expects'} ${check.expected}`,
          `      observed: ${check.observed}`,
          ...check.evidence.slice(0, 6).map((l) => `        ${l}`),
        );
      }
      if (!s.evidenceDir || phase.name === 'baseline') continue;
      const dir = join(
        s.evidenceDir,
        s.phases.some((p) => p.variant !== phase.variant) ? phase.variant : '',
        phase.name,
      );
      for (const node of await readdir(dir).catch(() => [] as string[])) {
        const capture = (await read(join(dir, node, 'capture.txt'))).split('\n').filter(Boolean);
        if (capture.length)
          out.push(
            `    node ${node} capture (${capture.length} packets, first 12):`,
            ...capture.slice(0, 12).map((l) => `      ${l}`),
          );
        const conntrack = (await read(join(dir, node, 'conntrack-L.txt')))
          .split('\n')
          .filter((l) => l.includes('tcp') || l.includes('udp'));
        if (conntrack.length)
          out.push(`    node ${node} conntrack:`, ...conntrack.slice(0, 6).map((l) => `      ${l}`));
      }
      if (evidenceKept) out.push(`    evidence: ${dir}`);
    }
    if (culprits.size)
      out.push(
        `\n  ${culprits.size === 1 ? 'culprit' : `${culprits.size} culprits`} of ${s.id}:`,
        ...[...culprits.values()].flatMap(({ story: [head, ...rest], where }) => [
          `    ${head!.replace(/^culprit: /, '')}`,
          ...rest.map((l) => `      ${l}`),
          `      seen by: ${where.join(', ')}`,
        ]),
      );
  }
  return `${out.join('\n')}\n`;
}
