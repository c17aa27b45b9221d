// The package's library entry (`import { runSuite } from 'netrepro'`): what a script needs to load
// scenarios, run them on a provider and write the reports the CLI writes. Nothing here starts a lab
// on import; providers load when created.
export { main } from './cli/build-cli.ts';
export { VERSION } from './model/version.ts';
import { createProvider as create, usableProvider as usable } from './providers/create-provider.ts';
import type { ClusterProvider } from './contract/provider.ts';
import type { RunConfig } from './providers/run-config.ts';
export { PROVIDER_NAMES } from './contract/provider-names.ts';
export { providerSupport } from './providers/provider-support-of.ts';
/** A provider by name or resolved configuration (the real providers' test seams stay out of the public types). */
export const createProvider = (config: RunConfig | string): Promise<ClusterProvider> => create(config);
/** The same, after its environment check: an unusable environment throws with the fix (exit 3 in the CLI). */
export const usableProvider = (config: RunConfig | string): Promise<ClusterProvider> => usable(config);
export { resolveRunConfig, type RunConfig, type RunConfigInput } from './providers/run-config.ts';
export { unsupported } from './contract/provider-support.ts';
export type { ClusterProvider, ProviderSupport, Misfit, StartedCluster, Target } from './contract/provider.ts';
export type { Capability } from './model/capabilities.ts';
export { runSuite, type SuiteOptions } from './engine/run/run-suite.ts';
export { runGate, type GateResult, type GateOptions } from './engine/gate/run-gate.ts';
export type { RunResult, ScenarioResult, PhaseResult, ProbeResult, RunEvent, Verdict } from './engine/run/results.ts';
export { scenarioFailures, runFailures } from './engine/run/failures.ts';
export { loadAllScenarios, selectScenarios, SCENARIO_DIR } from './model/find-scenarios.ts';
export { loadScenarioFile, parseScenario, type LoadedScenario } from './model/load-scenario.ts';
export { loadProfile, applyProfile, type Profile } from './model/profile.ts';
export { ScenarioSchema, type Scenario } from './model/scenario-schema.ts';
export { HarnessError, ScenarioValidationError, type ErrorCode, type ValidationIssue } from './model/errors.ts';
export { reportContext, type ReportContext } from './report/report-context.ts';
export { junitXml } from './report/junit-reporter.ts';
export { runMarkdown } from './report/markdown-reporter.ts';
export { jsonReporter } from './report/json-reporter.ts';
