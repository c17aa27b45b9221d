// Timing of the netns suite: the whole suite (serial and --parallel 2), lab set-up and teardown,
// and probe verdict times by phase and outcome (the non-ok "hang" verdicts are bounded by the
// probe timeout), over N runs with min / median / max.
// Usage: npm run bench -- [--runs N] [--out DIR]   (root; writes DIR/bench.json and DIR/bench.md)
// Not a test: nothing here asserts on time.
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, release } from 'node:os';
import { join } from 'node:path';
import type { RunResult } from '../harness/engine/results.ts';
import { runSuite } from '../harness/engine/run-suite.ts';
import { setUpSuiteScript } from './suite-script.ts';

const { runs, options: values, provider, scenarios, signal } = await setUpSuiteScript('bench', 5);

/** metric name -> samples (ms) */
const samples = new Map<string, number[]>();
const add = (name: string, ms: number) => samples.set(name, [...(samples.get(name) ?? []), ms]);
let failedRuns = 0;

function record(mode: string, result: RunResult): void {
  add(`suite ${mode}`, result.durationMs);
  for (const s of result.scenarios) {
    add(`scenario ${s.id} (${mode})`, s.durationMs);
    for (const lab of s.labs) {
      add(`lab set-up (${mode})`, lab.provisionMs);
      add(`lab teardown (${mode})`, lab.teardownMs);
    }
    for (const p of s.phases) for (const probe of p.probes) add(`probe ${p.name} ${probe.observed} (${mode})`, probe.durationMs);
  }
  if (result.summary.failed + result.summary.errored > 0) failedRuns++;
}

for (let i = 1; i <= runs && !signal.aborted; i++) {
  for (const [mode, parallel] of [['serial', 1], ['parallel 2', 2]] as const) {
    const result = await runSuite(scenarios, { provider, parallel, signal, emit: () => {} });
    record(mode, result);
    process.stderr.write(`run ${i}/${runs} ${mode}: ${result.durationMs} ms, ${JSON.stringify(result.summary)}\n`);
  }
}

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length / 2;
  const median = s.length % 2 ? s[Math.floor(mid)]! : (s[mid - 1]! + s[mid]!) / 2;
  return { n: s.length, min: s[0]!, median: Math.round(median), max: s.at(-1)! };
};
const metrics = [...samples].map(([name, xs]) => ({ name, ...stats(xs) }));
const report = {
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, kernel: release(), node: process.version },
  runs,
  scenarios: scenarios.map((s) => s.scenario.id),
  failedRuns,
  metrics,
};
await mkdir(values.out!, { recursive: true });
await writeFile(join(values.out!, 'bench.json'), JSON.stringify(report, null, 2) + '\n');
const md = [
  `# netrepro bench (${report.date.slice(0, 10)}, ${report.machine.cpus} cores, Linux ${report.machine.kernel}, Node ${report.machine.node})`,
  '',
  `${runs} run(s) of ${scenarios.length} scenarios, each serial and with --parallel 2; ${failedRuns} run(s) with a failed or errored scenario.`,
  'Probe rows: verdict time by phase and observed outcome (non-ok verdicts wait for the probe timeout).',
  '',
  '| metric | n | min ms | median ms | max ms |',
  '|---|---:|---:|---:|---:|',
  ...metrics.map((m) => `| ${m.name} | ${m.n} | ${m.min} | ${m.median} | ${m.max} |`),
  '',
].join('\n');
await writeFile(join(values.out!, 'bench.md'), md);
process.stdout.write(md);
process.exit(signal.aborted ? 130 : 0);
