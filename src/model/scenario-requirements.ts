// Everything a scenario needs from a provider, each need with where it comes from, read from the file
// alone: steps (their kinds' `requires`), check commands, probe sources, hosts in the topology.
import { placeholderNeeds, targetNeeds, type Requirement } from './capabilities.ts';
import { hostGlobalSysctl } from './host-global-sysctls.ts';
import { commandArgv } from './placeholders.ts';
import type { Scenario } from './scenario-schema.ts';
import { stepKindOf, stepRequires, type StepSpec } from './steps/registry.ts';
import { probeClient, probeRunsAgent } from './probes/registry.ts';

interface PhaseLike {
  steps?: StepSpec[];
  checks?: Scenario['baseline']['checks'];
}

export function scenarioRequirements(scenario: Scenario): Requirement[] {
  const out: Requirement[] = [];
  if (scenario.topology.hosts.length > 0)
    out.push({
      capability: 'external-hosts',
      by: `topology.hosts: ${scenario.topology.hosts.map((h) => h.name).join(', ')}`,
    });
  const hostKernel = (name: string, where: string) => {
    const why = hostGlobalSysctl(name);
    if (why) out.push({ capability: 'host-kernel', by: `${where}: ${name} ${why}` });
  };
  for (const n of scenario.topology.nodes)
    for (const name of Object.keys(n.sysctls ?? {})) hostKernel(name, `topology.nodes ${n.name}.sysctls`);
  for (const p of scenario.probes) {
    const from = String(p.from);
    for (const capability of targetNeeds(probeClient(from))) out.push({ capability, by: `probe ${p.id}` });
    if (from.startsWith('node/') && probeRunsAgent(p)) out.push({ capability: 'node-agent', by: `probe ${p.id}` });
  }
  const phases: [string, PhaseLike, string?][] = [
    ['baseline', scenario.baseline as PhaseLike],
    ['fault', scenario.fault],
    ...scenario.fixes.map((f): [string, PhaseLike, string] => [`fix ${f.name}`, f, f.name]),
  ];
  for (const [name, phase, fix] of phases) {
    const start = out.length;
    (phase.steps ?? []).forEach((step, i) => {
      const key = stepKindOf(step)[0].key;
      for (const capability of stepRequires(step)) out.push({ capability, by: `${name}, step ${i + 1} (${key})` });
      if ('sysctl' in step && step.sysctl) hostKernel(step.sysctl.name, `${name}, step ${i + 1} (sysctl)`);
    });
    for (const c of phase.checks ?? []) {
      // patterns take placeholders too; {ns/NAME} needs nothing: every provider names its namespaces
      const patterns = [c.counter, c.matches, c.ready].filter((p) => p !== undefined);
      const needs = c.snat
        ? ['snat-table' as const]
        : [...targetNeeds(c.on), ...placeholderNeeds([...commandArgv(c.cmd!), ...patterns])];
      for (const capability of needs) out.push({ capability, by: `${name}, check ${c.id}` });
      // a reported number decides nothing, so only asserting checks need the addresses to mean the same
      const literal = c.report ? undefined : literalAddress(c);
      if (literal) out.push({ capability: 'scenario-addresses', by: `${name}, check ${c.id} (${literal})` });
    }
    (phase.steps ?? []).forEach((step, i) => {
      const literal = literalAddress(step);
      if (literal)
        out.push({
          capability: 'scenario-addresses',
          by: `${name}, step ${i + 1} (${stepKindOf(step)[0].key}: ${literal})`,
        });
    });
    for (const [probe, expected] of Object.entries((phase as { expect?: Record<string, unknown> }).expect ?? {})) {
      const literal = literalAddress(expected);
      if (literal) out.push({ capability: 'scenario-addresses', by: `${name}, expect.${probe} (${literal})` });
    }
    if (fix) for (const r of out.slice(start)) r.fix = fix;
  }
  return out;
}

const DOTTED_QUAD = /(?<![\d.])(\d{1,3})\.\d{1,3}\.\d{1,3}\.\d{1,3}(?![\d.])/g;

/**
 * The first IPv4 address written literally in a check, step or expectation, also as a pattern's escaped dots
 * (placeholders such as {pod/web} are references, not literals; loopback and 0.0.0.0 mean the same on every cluster).
 */
export function literalAddress(value: unknown): string | undefined {
  // a regular expression's escaped dots (10\.244\.1\.3) name the address all the same
  const text = JSON.stringify(value ?? null).replaceAll('\\\\.', '.');
  for (const m of text.matchAll(DOTTED_QUAD)) if (m[1] !== '127' && m[0] !== '0.0.0.0') return m[0];
  return undefined;
}
