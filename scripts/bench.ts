// Timing of the netns suite: the whole suite (serial and --parallel 2), lab set-up and teardown,
// and probe verdict times by phase and outcome (the non-ok "hang" verdicts are bounded by the
// probe timeout), over N runs with min / median / max. With --labs: only lab set-up and teardown,
// per CNI shape and per set-up step, one lab at a time (no probes), for the topology of every scenario.
// Not a test: nothing here asserts on time.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { cpus, loadavg, release } from 'node:os';
import { join } from 'node:path';
import { newRunId, runPrefix } from '../src/contract/run-id.ts';
import type { RunResult } from '../src/engine/run/results.ts';
import { runSuite } from '../src/engine/run/run-suite.ts';
import { setUpSuiteScript } from './suite-script.ts';

const USAGE = `usage: npm run bench -- [--runs N] [--out DIR] [--labs] [--modes serial,parallel]   (root)
  --runs N      rounds (default 5)
  --out DIR     writes DIR/bench.json and DIR/bench.md (default reports)
  --labs        lab set-up and teardown only: every scenario's topology, one lab at a time, per step
  --modes LIST  which suite runs per round: serial, parallel (--parallel 2); default both
Medians are only comparable on the same machine under the same load: the report records the load average.`;

const {
  runs,
  options: values,
  provider,
  scenarios,
  signal,
} = await setUpSuiteScript(
  'bench',
  5,
  { labs: { type: 'boolean' }, modes: { type: 'string', default: 'serial,parallel' } },
  USAGE,
);
const load = [loadavg()[0]!];

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
    for (const p of s.phases)
      for (const probe of p.probes) add(`probe ${p.name} ${probe.observed} (${mode})`, probe.durationMs);
  }
  if (result.summary.failed + result.summary.errored > 0) failedRuns++;
}

/** One lab per scenario topology, set up and torn down; the provider's step log lines end in `(N ms)`. */
async function benchLabs(round: number): Promise<void> {
  for (const { scenario } of scenarios) {
    if (signal.aborted) return;
    const runId = newRunId();
    const steps: string[] = [];
    const t0 = performance.now();
    const lab = await provider.provision(scenario.topology, {
      runId,
      prefix: runPrefix(runId),
      signal,
      log: (l) => steps.push(l),
    });
    const t1 = performance.now();
    await lab.destroy();
    const t2 = performance.now();
    const shape = scenario.topology.cni;
    for (const name of ['lab set-up', `lab set-up (${shape})`]) add(name, Math.round(t1 - t0));
    for (const name of ['lab teardown', `lab teardown (${shape})`]) add(name, Math.round(t2 - t1));
    for (const line of steps) {
      const m = /^(.*) \((\d+) ms\)$/.exec(line);
      if (m) add(`  step (${shape}): ${m[1]}`, Number(m[2]));
    }
  }
  process.stderr.write(`round ${round}/${runs}: ${scenarios.length} labs\n`);
  load.push(loadavg()[0]!);
}

/**
 * CPU time the whole machine spent busy (user, nice, system, irq, softirq; /proc/stat, in ms): the
 * commands run as children of the native spawner, which this process never waits for, so its own
 * rusage misses them; the kernel's work for the labs (namespace teardown, softirq) is counted too, and
 * so is anything else running: compare runs on an otherwise idle machine.
 */
async function busyCpuMs(): Promise<number> {
  const fields = (await readFile('/proc/stat', 'utf8')).split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0] = fields;
  return ((user + nice + system + irq + softirq) * 1000) / 100; // USER_HZ is 100 on Linux
}

const modes = (
  [
    ['serial', 1],
    ['parallel 2', 2],
  ] as const
).filter(([mode]) => (values.modes ?? '').split(',').some((m) => mode.startsWith(m.trim())));
for (let i = 1; i <= runs && !signal.aborted; i++) {
  if (values.labs) {
    await benchLabs(i);
    continue;
  }
  for (const [mode, parallel] of modes) {
    const cpu0 = await busyCpuMs();
    const result = await runSuite(scenarios, { provider, parallel, signal, emit: () => {} });
    add(`suite ${mode}: machine CPU busy`, Math.round((await busyCpuMs()) - cpu0));
    record(mode, result);
    load.push(loadavg()[0]!);
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
  /** 1-minute load average at the start and after each run: the machine may be shared. */
  loadAverage: load.map((l) => Math.round(l * 100) / 100),
  runs,
  scenarios: scenarios.map((s) => s.scenario.id),
  failedRuns,
  metrics,
};
await mkdir(values.out!, { recursive: true });
await writeFile(join(values.out!, 'bench.json'), `${JSON.stringify(report, null, 2)}\n`);
const md = [
  `# netrepro bench (${report.date.slice(0, 10)}, ${report.machine.cpus} cores, Linux ${report.machine.kernel}, Node ${report.machine.node})`,
  '',
  values.labs
    ? `${runs} round(s) of ${scenarios.length} labs (one per scenario topology), one at a time, no probes.`
    : `${runs} run(s) of ${scenarios.length} scenarios (${modes.map(([m]) => m).join(', ')}); ${failedRuns} run(s) with a failed or errored scenario.`,
  `1-minute load average: ${report.loadAverage.join(', ')} (${report.machine.cpus} cores).`,
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
