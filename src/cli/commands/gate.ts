// `netrepro gate`: every scenario's trigger under a baseline and a candidate profile; exit 1 when the
// candidate is newly susceptible to an incident.
import { usableProvider } from '../../providers/create-provider.ts';
import type { ClusterProvider } from '../../contract/provider.ts';
import { resolveRunConfig } from '../../providers/run-config.ts';
import { colorsFor } from '../../report/colors.ts';
import { fitWidth } from '../../report/fit-width.ts';
import { EXIT } from '../exit-codes.ts';
import { interruptible } from '../interruptible.ts';
import { checkReportPaths } from '../report-paths.ts';
import { runGate } from '../../engine/gate/run-gate.ts';
import { loadAllScenarios, selectScenarios } from '../../model/find-scenarios.ts';
import { loadProfile, type Profile } from '../../model/profile.ts';
import { gateReport } from '../../report/gate-json.ts';
import { gateHtml } from '../../report/gate-html.ts';
import { gateJunit } from '../../report/gate-junit.ts';
import { gateMarkdown, gateText } from '../../report/gate-report.ts';
import { writeReport } from '../../report/write-report.ts';

interface GateOptions {
  baseline: string;
  candidate: string;
  provider: string;
  json?: string;
  markdown?: string;
  junit?: string;
  html?: string;
  parallel: number;
}

export default async function gate(ids: string[], options: GateOptions): Promise<number> {
  const { stdoutTaken } = await checkReportPaths([
    { flag: '--json', what: 'gate JSON', path: options.json },
    { flag: '--markdown', what: 'gate Markdown', path: options.markdown },
    { flag: '--junit', what: 'gate JUnit', path: options.junit },
    { flag: '--html', what: 'gate HTML', path: options.html },
    { flag: '$GITHUB_STEP_SUMMARY', what: 'step summary', path: process.env.GITHUB_STEP_SUMMARY || undefined },
  ]);
  const [baseline, candidate] = await Promise.all([loadProfile(options.baseline), loadProfile(options.candidate)]);
  const scenarios = ids.length ? await selectScenarios(ids) : await loadAllScenarios();
  // one run configuration per profile: a real provider gets each profile's Kubernetes and CNI versions
  const made = new Map<string, Promise<ClusterProvider>>();
  const providerFor = (profile: Profile) => {
    if (!made.has(profile.name))
      made.set(profile.name, usableProvider(resolveRunConfig({ provider: options.provider, profile })));
    return made.get(profile.name)!;
  };
  // an unusable provider or a bad version in either profile stops the gate before any lab (exit 3 / 2)
  await Promise.all([providerFor(baseline), providerFor(candidate)]);
  const { signal, exitCode, labsDown } = interruptible();
  const c = colorsFor(process.stderr);
  // by meaning: a side is only a regression once compared, so `susceptible` alone is a warning, not an alarm
  const colour: Record<string, (s: string) => string> = {
    immune: c.green,
    susceptible: c.yellow,
    broken: c.red,
    unjudged: c.red,
    'not-applicable': c.dim,
  };
  const onAssessed = (profile: string, id: string, a: { verdict: string; reason: string; decidedBy: string[] }) => {
    const verdict = (colour[a.verdict] ?? ((x: string) => x))(a.verdict);
    const line = `${c.bold(profile)} ${id}: ${verdict}${a.decidedBy.length ? ` by ${a.decidedBy.join(', ')}` : ''} ${c.dim(`(${a.reason})`)}`;
    process.stderr.write(`${fitWidth(line, process.stderr.isTTY ? process.stderr.columns : undefined)}\n`);
  };
  const startedAt = new Date().toISOString();
  const result = await runGate(scenarios, baseline, candidate, {
    provider: providerFor,
    signal,
    onAssessed,
    parallel: options.parallel,
  }).finally(labsDown);
  if (exitCode() !== undefined) return exitCode()!;
  const out = stdoutTaken ? process.stderr : process.stdout;
  out.write(fitWidth(gateText(result, colorsFor(out)), out.isTTY ? out.columns : undefined));
  const stepSummary = process.env.GITHUB_STEP_SUMMARY;
  const written = await Promise.allSettled([
    options.json && writeReport('gate JSON', options.json, `${JSON.stringify(gateReport(result), null, 2)}\n`),
    options.markdown && writeReport('gate Markdown', options.markdown, gateMarkdown(result)),
    options.junit && writeReport('gate JUnit', options.junit, gateJunit(result, startedAt)),
    options.html && writeReport('gate HTML', options.html, gateHtml(result)),
    // on GitHub Actions the job's summary page shows the gate, regressions first
    stepSummary &&
      writeReport('step summary ($GITHUB_STEP_SUMMARY)', stepSummary, `${gateMarkdown(result)}\n`, { append: true }),
  ]);
  const failed = written.find((w) => w.status === 'rejected');
  if (failed) throw failed.reason;
  // a scenario that could not be judged under one profile fails the gate too: it could hide a regression
  return result.scenarios.some((s) => s.change === 'regression' || s.change === 'unjudged') ? EXIT.failed : EXIT.ok;
}
