// Everything a scenario needs from a provider, each need with where it comes from, read from the file
// alone: steps (their kinds' `requires`), check commands, probe sources, hosts in the topology.
import { placeholderNeeds, targetNeeds, type Requirement } from './capabilities.ts';
import { commandArgv } from './placeholders.ts';
import type { Scenario } from './scenario-schema.ts';
import { stepKindOf, stepRequires, type StepSpec } from './steps/registry.ts';
import { probeClient } from './probes/registry.ts';

interface PhaseLike {
  steps?: StepSpec[];
  checks?: Scenario['baseline']['checks'];
}

export function scenarioRequirements(scenario: Scenario): Requirement[] {
  const out: Requirement[] = [];
  if (scenario.topology.hosts.length > 0) out.push({ capability: 'external-hosts', by: `topology.hosts: ${scenario.topology.hosts.map((h) => h.name).join(', ')}` });
  for (const p of scenario.probes) {
    const from = String(p.from);
    for (const capability of targetNeeds(probeClient(from))) out.push({ capability, by: `probe ${p.id}` });
  }
  const phases: [string, PhaseLike][] = [
    ['baseline', scenario.baseline as PhaseLike],
    ['fault', scenario.fault],
    ...scenario.fixes.map((f): [string, PhaseLike] => [`fix ${f.name}`, f]),
  ];
  for (const [name, phase] of phases) {
    (phase.steps ?? []).forEach((step, i) => {
      const key = stepKindOf(step)[0].key;
      for (const capability of stepRequires(step)) out.push({ capability, by: `${name}, step ${i + 1} (${key})` });
    });
    for (const c of phase.checks ?? []) {
      for (const capability of [...targetNeeds(c.on), ...placeholderNeeds(commandArgv(c.cmd))]) out.push({ capability, by: `${name}, check ${c.id}` });
    }
  }
  return out;
}
