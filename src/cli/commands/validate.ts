// `netrepro validate FILE...`: check scenario files without running them. Under GitHub Actions each
// problem is also an ::error annotation, so it shows on the line of the pull request's diff.
// With --provider, also whether that provider can run each one, from its declared capabilities and
// topology fit alone (nothing is loaded or provisioned): a file it cannot run is valid and reported as
// `FILE: skipped on PROVIDER: REASON`, exactly what `run` would report, and exits 0 like `run` does.
import { providerSupport } from '../../providers/create-provider.ts';
import type { ProviderSupport } from '../../contract/provider.ts';
import { unrunnableFixes, unsupported } from '../../contract/provider-support.ts';
import { resolveRunConfig } from '../../providers/run-config.ts';
import { HarnessError, ScenarioValidationError, type ValidationIssue } from '../../model/errors.ts';
import { loadScenarioFile } from '../../model/load-scenario.ts';
import { applyProfile, loadProfile } from '../../model/profile.ts';

/** A workflow command (docs.github.com, "Workflow commands for GitHub Actions"): data and properties escaped. */
export function githubAnnotation(issue: ValidationIssue): string {
  const data = (s: string) => s.replaceAll('%', '%25').replaceAll('\r', '%0D').replaceAll('\n', '%0A');
  const prop = (s: string) => data(s).replaceAll(':', '%3A').replaceAll(',', '%2C');
  const where = [
    `file=${prop(issue.file)}`,
    ...(issue.line > 0 ? [`line=${issue.line}`, `col=${issue.column}`] : []),
    `title=${prop(`netrepro: ${issue.field || 'scenario'}`)}`,
  ];
  const got =
    issue.received !== undefined
      ? ` (received ${issue.received}${issue.expected ? `, expected ${issue.expected}` : ''})`
      : issue.expected
        ? ` (expected ${issue.expected})`
        : '';
  return `::error ${where.join(',')}::${data(`${issue.field ? `${issue.field}: ` : ''}${issue.message}${got}`)}`;
}

export default async function validate(
  files: string[],
  options: { provider?: string; profile?: string } = {},
): Promise<void> {
  const problems: ScenarioValidationError[] = [];
  const profile = options.profile ? await loadProfile(options.profile) : undefined;
  let support: ProviderSupport | undefined;
  if (options.provider || profile) support = providerSupport(resolveRunConfig({ provider: options.provider, profile }));
  for (const file of files) {
    try {
      const { scenario } = await loadScenarioFile(file, { cached: false });
      const profiled = profile ? applyProfile(scenario, profile) : scenario;
      const skip = support && unsupported(support, profiled);
      const leftOut = support && !skip ? unrunnableFixes(support, profiled) : [];
      process.stdout.write(
        skip
          ? `${file}: skipped on ${support!.name}: ${skip.reason}${skip.hint ? ` (hint: ${skip.hint})` : ''}\n`
          : `${file}: ok${leftOut.map(({ fix, reason }) => `; fix ${fix} skipped: ${reason}`).join('')}\n`,
      );
      process.stdout.write(notReplayedLines(file, scenario.topology.notReplayed));
    } catch (e) {
      if (!(e instanceof ScenarioValidationError)) throw e;
      problems.push(e);
    }
  }
  if (problems.length === 0) return;
  if (process.env.GITHUB_ACTIONS === 'true')
    for (const issue of problems.flatMap((p) => p.issues)) process.stdout.write(`${githubAnnotation(issue)}\n`);
  const hints = [...new Set(problems.map((p) => p.hint).filter(Boolean))];
  throw new HarnessError('SCENARIO_INVALID', problems.map((p) => p.message).join('\n'), hints.join('; '));
}

/** What a replay's capture held that the lab does not restore (topology.notReplayed): said on every validate. */
export function notReplayedLines(file: string, items: readonly { node?: string; what: string; why: string }[]): string {
  if (items.length === 0) return '';
  return [
    `${file}: not replayed (${items.length}): the lab runs without it, so the replay may differ from the incident there`,
    ...items.map((x) => `  - ${x.node ? `node ${x.node}: ` : ''}${x.what}: ${x.why}`),
    '',
  ].join('\n');
}
