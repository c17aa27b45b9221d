// What kind, minikube and k3s share as providers: resolved options, the capabilities and topology fit of a
// cluster of container nodes, and detecting the CLIs it needs (helm too for the cilium shape).
import type { Capability } from '../../../model/capabilities.ts';
import type { Scenario, TopologySpec } from '../../../model/scenario-schema.ts';
import type { Availability, Misfit } from '../../../contract/provider.ts';
import { asResolved, type RealClusterOptions, type ResolvedRealOptions } from '../common/real-options.ts';
import { detectTools, type ToolName } from './cli-tools.ts';
import { realSupport } from './container-support.ts';

export abstract class ContainerProvider<N extends 'kind' | 'minikube' | 'k3s'> {
  readonly options: ResolvedRealOptions;
  readonly capabilities: ReadonlySet<Capability>;
  readonly lacksBecause?: Partial<Record<Capability, string>>;
  readonly labsAreClusters = true;

  /** `tools`: the CLIs the provider drives besides helm. */
  protected constructor(
    readonly name: N,
    options: RealClusterOptions | ResolvedRealOptions,
    private readonly tools: readonly ToolName[],
  ) {
    this.options = asResolved(options);
    const support = realSupport(name, this.options);
    this.capabilities = support.capabilities;
    if (support.lacksBecause) this.lacksBecause = support.lacksBecause;
  }

  detect(): Promise<Availability> {
    return detectTools(this.name, [...this.tools, ...(this.options.cni === 'cilium' ? (['helm'] as const) : [])]);
  }

  fit(topology: TopologySpec): Misfit | undefined {
    return realSupport(this.name, this.options).fit(topology);
  }

  fitSteps(scenario: Scenario): Misfit | undefined {
    return realSupport(this.name, this.options).fitSteps?.(scenario);
  }
}
