// What kind, minikube and k3s share as providers: resolved options, the capabilities and topology fit of
// a real cluster, and reaping their leftovers by the run prefix.
import type { Capability } from '../../../model/capabilities.ts';
import type { Scenario, TopologySpec } from '../../../model/scenario-schema.ts';
import type { Misfit } from '../../../contract/provider.ts';
import { reapReal } from './reap-leftovers.ts';
import { asResolved, type RealClusterOptions, type ResolvedRealOptions } from '../common/real-options.ts';
import { realSupport } from './container-support.ts';

export abstract class RealProvider<N extends 'kind' | 'minikube' | 'k3s'> {
  readonly options: ResolvedRealOptions;
  readonly capabilities: ReadonlySet<Capability>;
  readonly lacksBecause?: Partial<Record<Capability, string>>;
  readonly labsAreClusters = true;

  protected constructor(
    readonly name: N,
    options: RealClusterOptions | ResolvedRealOptions,
  ) {
    this.options = asResolved(options);
    const support = realSupport(name, this.options);
    this.capabilities = support.capabilities;
    if (support.lacksBecause) this.lacksBecause = support.lacksBecause;
  }

  fit(topology: TopologySpec): Misfit | undefined {
    return realSupport(this.name, this.options).fit(topology);
  }

  fitSteps(scenario: Scenario): Misfit | undefined {
    return realSupport(this.name, this.options).fitSteps?.(scenario);
  }

  reap({ force }: { force: boolean }): Promise<string[]> {
    return reapReal(this.name, { force, workDir: this.options.workDir });
  }
}
