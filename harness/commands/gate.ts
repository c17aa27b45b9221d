// `netrepro gate`: every scenario's trigger under a baseline and a candidate profile; exit 1 when the
// candidate is newly susceptible to an incident.
import { usableProvider } from '../../clusters/create-provider.ts';
import type { ClusterProvider } from '../../clusters/provider.ts';
import { resolveRunConfig } from '../../clusters/run-config.ts';
import { colorsFor } from '../report/colors.ts';
import { EXIT } from '../cli/exit-codes.ts';
import { interruptible } from '../cli/interruptible.ts';
import { checkReportPaths } from '../cli/report-paths.ts';
import { runGate } from '../gate/run-gate.ts';
import { loadAllScenarios, selectScenarios } from '../model/find-scenarios.ts';
import { loadProfile, type Profile } from '../model/profile.ts';
import { gateReport } from '../report/gate-json.ts';
import { gateMarkdown, gateText } from '../report/gate-report.ts';
import { writeReport } from '../report/write-report.ts';

interface GateOptions {
  baseline: string;
  candidate: string;
  provider: string;
  json?: string;
  markdown?: string;
  parallel: number;
}

export default async function gate(ids: string[], options: GateOptions): Promise<number> {
  const { stdoutTaken } = await checkReportPaths([
    { flag: '--json', what: 'gate JSON', path: options.json },
    { flag: '--markdown', what: 'gate Markdown', path: options.markdown },
  ]);
  const [baseline, candidate] = await Promise.all([loadProfile(options.baseline), loadProfile(options.candidate)]);
  const scenarios = ids.length ? await selectScenarios(ids) : await loadAllScenarios();
  // one run configuration per profile: a real provider gets each profile's Kubernetes and CNI versions
  const made = new Map<string, Promise<ClusterProvider>>();
  const providerFor = (profile: Profile) => {
    if (!made.has(profile.name)) made.set(profile.name, usableProvider(resolveRunConfig({ provider: options.provider, profile })));
    return made.get(profile.name)!;
  };
  // an unusable provider or a bad version in either profile stops the gate before any lab (exit 3 / 2)
  await Promise.all([providerFor(baseline), providerFor(candidate)]);
  const { signal, exitCode, labsDown } = interruptible();
  const c = colorsFor(process.stderr);
  const onAssessed = (profile: string, id: string, a: { verdict: string; reason: string }) =>
    process.stderr.write(`${c.bold(profile)} ${id}: ${a.verdict === 'susceptible' ? c.red(a.verdict) : c.green(a.verdict)} ${c.dim(`(${a.reason})`)}\n`);
  const result = await runGate(scenarios, baseline, candidate, { provider: providerFor, signal, onAssessed, parallel: options.parallel }).finally(labsDown);
  if (exitCode() !== undefined) return exitCode()!;
  (stdoutTaken ? process.stderr : process.stdout).write(gateText(result));
  const written = await Promise.allSettled([
    options.json && writeReport('gate JSON', options.json, JSON.stringify(gateReport(result), null, 2) + '\n'),
    options.markdown && writeReport('gate Markdown', options.markdown, gateMarkdown(result)),
  ]);
  const failed = written.find((w) => w.status === 'rejected');
  if (failed) throw failed.reason;
  // a scenario that could not be judged under one profile fails the gate too: it could hide a regression
  return result.scenarios.some((s) => s.change === 'regression' || s.change === 'unjudged') ? EXIT.failed : EXIT.ok;
}
