// Every step of a scenario in file order, with the place a message names it by: `fault, step 2`.
import type { Scenario } from './scenario-schema.ts';
import type { StepSpec } from './steps/registry.ts';

export interface PlacedStep {
  /** `baseline, step 1`, `fault, step 2`, `fix NAME, step 1`. */
  where: string;
  step: StepSpec;
}

export function placedSteps(scenario: Scenario): PlacedStep[] {
  const phases: [string, StepSpec[]][] = [
    ['baseline', (scenario.baseline as { steps?: StepSpec[] }).steps ?? []],
    ['fault', scenario.fault.steps ?? []],
    ...scenario.fixes.map((fix): [string, StepSpec[]] => [`fix ${fix.name}`, fix.steps ?? []]),
  ];
  return phases.flatMap(([phase, steps]) => steps.map((step, i) => ({ where: `${phase}, step ${i + 1}`, step })));
}
