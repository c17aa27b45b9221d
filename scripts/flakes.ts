// Runs the whole netns suite N times in this process, one scenario at a time, and reports how
// often each scenario passed, with the details of every failure (probe mismatch text, errors).
// Usage: npm run flakes -- [--runs N] [--parallel N] [--out DIR] [ids...]   (root; writes DIR/flakes.json)
// --parallel above the core count is the load test: verdict margins must hold with labs competing for CPU.
// Exit 1 if any run had a failed or errored scenario. No retries: a flake is a finding.
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, release } from 'node:os';
import { join } from 'node:path';
import { scenarioFailures } from '../src/engine/run/failures.ts';
import { runSuite } from '../src/engine/run/run-suite.ts';
import { setUpSuiteScript } from './suite-script.ts';

const {
  runs,
  options: values,
  provider,
  scenarios,
  signal,
} = await setUpSuiteScript('flakes', 100, {
  'report-dir': { type: 'string' },
  parallel: { type: 'string', default: '1' },
});
const parallel = Number(values.parallel);
if (!Number.isInteger(parallel) || parallel < 1) {
  console.error('flakes: --parallel must be a whole number >= 1');
  process.exit(2);
}

interface Failure {
  run: number;
  scenario: string;
  verdict: string;
  /** Everything that did not hold: errors, probe mismatches, failed checks. */
  failures: string[];
  /** The evidence behind each probe that did not hold. */
  probes: { where: string; summary: string; detail: unknown }[];
  log: string[];
  evidenceDir?: string;
}
const counts = Object.fromEntries(
  scenarios.map((s) => [s.scenario.id, { passed: 0, measured: 0, failed: 0, errored: 0, skipped: 0 }]),
);
const failures: Failure[] = [];
const started = Date.now();
let done = 0;

for (let run = 1; run <= runs && !signal.aborted; run++) {
  // evidence only when asked (--report-dir): captures of every run would be large
  const reportDir = values['report-dir'] ? join(values['report-dir'], `run-${run}`) : undefined;
  const result = await runSuite(scenarios, { provider, parallel, reportDir, signal, emit: () => {} });
  done = run;
  for (const s of result.scenarios) {
    counts[s.id]![s.verdict]++;
    if (s.verdict === 'passed' || s.verdict === 'measured' || s.verdict === 'skipped') continue;
    failures.push({
      run,
      scenario: s.id,
      verdict: s.verdict,
      failures: scenarioFailures(s),
      probes: s.phases.flatMap((p) =>
        p.probes
          .filter((x) => !x.matched)
          .map((x) => ({ where: `${p.variant}/${p.name}/${x.id}`, summary: x.summary, detail: x.detail })),
      ),
      log: s.log,
      evidenceDir: s.evidenceDir,
    });
  }
  const bad = result.scenarios.filter((s) => s.verdict === 'failed' || s.verdict === 'errored');
  process.stderr.write(
    `run ${run}/${runs}: ${result.durationMs} ms${bad.length ? `  FAILED: ${bad.map((s) => s.id).join(', ')}` : ''}\n`,
  );
}

const report = {
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, kernel: release(), node: process.version },
  runsRequested: runs,
  parallel,
  runsCompleted: done,
  durationMs: Date.now() - started,
  counts,
  failures,
};
await mkdir(values.out!, { recursive: true });
await writeFile(join(values.out!, 'flakes.json'), `${JSON.stringify(report, null, 2)}\n`);
for (const [id, c] of Object.entries(counts))
  process.stdout.write(
    `${id.padEnd(42)} ${c.measured ? `measured ${c.measured}` : `passed ${c.passed}`}/${done}${c.failed ? `, failed ${c.failed}` : ''}${c.errored ? `, errored ${c.errored}` : ''}${c.skipped ? `, skipped ${c.skipped}` : ''}\n`,
  );
for (const f of failures) {
  process.stdout.write(`\nrun ${f.run} ${f.scenario}: ${f.verdict}\n`);
  for (const line of f.failures) process.stdout.write(`  ${line}\n`);
}
process.exit(signal.aborted ? 130 : failures.length > 0 ? 1 : 0);
