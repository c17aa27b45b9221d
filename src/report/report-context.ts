// What reports say about a run beyond its results: the tool, the machine, and per scenario the facts
// a CI reader filters by (CNI, kube-proxy profile, the file it came from).
import { existsSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { LoadedScenario } from '../model/load-scenario.ts';
import { PACKAGE_ROOT, packagePath } from '../model/package-root.ts';
import type { TopologySpec } from '../model/scenario-schema.ts';
import { reportMeta } from './report-meta.ts';
import { defaultInvocation, type Invocation, type ScenarioRef } from './reproduce-command.ts';

export interface ScenarioFacts extends ScenarioRef {
  cni: string;
  /** The kube-proxy rule layout, named as in profiles/ (kube-proxy-1.29). */
  profile: string;
  /** The fixes' names in file order: a variant's place under `fixes:`. */
  fixes: string[];
  /** What the HTML report shows of the incident: its mechanism, write-up and sources, and the cluster. */
  description?: string;
  incident?: string;
  /** Where the write-up is on this machine, if it is there: the package's for a shipped scenario. */
  incidentFile?: string;
  sources?: string[];
  topology?: TopologySpec;
}

export interface ReportContext {
  netrepro: string;
  node: string;
  kernel: string;
  startedAt: string;
  /** How to start netrepro again as this run was started, for the commands that reproduce a scenario. */
  invocation: Invocation;
  scenarios: Map<string, ScenarioFacts>;
}

const isShipped = (file: string) => resolve(file).startsWith(packagePath('scenarios') + sep);

/** The write-up's file: in the package for a shipped scenario, else from the working directory or the file's. */
function writeupFile(scenarioFile: string, incident: string): string | undefined {
  const candidates = isShipped(scenarioFile)
    ? [join(PACKAGE_ROOT, incident)]
    : [resolve(incident), resolve(dirname(scenarioFile), incident)];
  return candidates.find((f) => existsSync(f));
}

export function reportContext(
  scenarios: readonly LoadedScenario[],
  startedAt = new Date(),
  appliedProfile?: string,
  invocation: Invocation = defaultInvocation(),
): ReportContext {
  const { netrepro, node, kernel } = reportMeta(startedAt);
  return {
    netrepro,
    node,
    kernel,
    startedAt: startedAt.toISOString(),
    invocation,
    scenarios: new Map(
      scenarios.map(({ file, scenario }) => [
        scenario.id,
        {
          cni: scenario.topology.cni,
          profile: `kube-proxy-${scenario.topology.kubeProxy}`,
          ...(appliedProfile ? { appliedProfile } : {}),
          file: relative(process.cwd(), file) || file,
          shipped: isShipped(file),
          fixes: scenario.fixes.map((f) => f.name),
          description: scenario.description,
          incident: scenario.incident,
          incidentFile: scenario.incident && writeupFile(file, scenario.incident),
          sources: scenario.sources,
          topology: scenario.topology,
        },
      ]),
    ),
  };
}
