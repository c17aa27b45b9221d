// What reports say about a run beyond its results: the tool, the machine, and per scenario the facts
// a CI reader filters by (CNI, kube-proxy profile, the file it came from).
import { relative, resolve, sep } from 'node:path';
import type { LoadedScenario } from '../model/load-scenario.ts';
import { PACKAGE_ROOT, packagePath } from '../model/package-root.ts';
import type { TopologySpec } from '../model/scenario-schema.ts';
import { reportMeta } from './report-meta.ts';
import type { Invocation } from './reproduce-command.ts';

export interface ScenarioFacts {
  cni: string;
  /** The kube-proxy rule layout, named as in profiles/ (kube-proxy-1.29). */
  profile: string;
  /** Relative to the working directory, as CI tools link files. */
  file: string;
  /** One of the package's own scenarios, which `run ID` finds wherever the package is installed. */
  shipped: boolean;
  /** The `--profile` the run applied (a name or a file), which a command that reproduces it repeats. */
  appliedProfile?: string;
  /** The fixes' names in file order: a variant's place under `fixes:`. */
  fixes: string[];
  /** What the HTML report shows of the incident: its mechanism, write-up and sources, and the cluster. */
  description?: string;
  incident?: string;
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

/** The entry point a reader calls: the checkout's own script in the package's folder, npx anywhere else. */
export const defaultInvocation = (env: string[] = []): Invocation => ({
  bin: resolve(process.cwd()) === PACKAGE_ROOT ? 'node bin/netrepro.js' : 'npx netrepro',
  env,
});

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
          shipped: resolve(file).startsWith(packagePath('scenarios') + sep),
          fixes: scenario.fixes.map((f) => f.name),
          description: scenario.description,
          incident: scenario.incident,
          sources: scenario.sources,
          topology: scenario.topology,
        },
      ]),
    ),
  };
}
