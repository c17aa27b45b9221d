// A capture bundle as a replay scenario (purpose: replay): the topology and each node's captured state, the
// probes ready to edit, every one expected `ok` in the baseline, which is the captured state (docs/import.md).
import { basename } from 'node:path';
import { stringify } from 'yaml';
import type { ScenarioInput } from '../../model/scenario-schema.ts';
import { STATE_FILES } from '../../model/captured-files.ts';
import { HarnessError } from '../../model/errors.ts';
import { deriveProbes } from './derive-probes.ts';
import { deriveTopology } from './derive-topology.ts';
import type { Bundle } from './read-bundle.ts';

export function importScenario(bundle: Bundle, id?: string): ScenarioInput {
  const { topology } = deriveTopology(bundle);
  const { probes, expect } = deriveProbes(topology);
  const m = bundle.manifest;
  if (probes.length === 0)
    throw new HarnessError(
      'USAGE',
      `${bundle.path}: nothing to probe: no Service with endpoints, no pods on two nodes${bundle.nodes.some((n) => n.conntrack?.captured) ? ', no UDP flow from a pod to a Service among the conntrack entries' : ', and no conntrack entries (captured without --conntrack)'}`,
      'capture again with --conntrack, so each UDP flow from a pod to a Service becomes a probe from its own source port; or write the probes by hand',
    );
  const source = [m.source?.kind, m.source?.run].filter(Boolean).join(' ');
  return {
    id: id ?? scenarioId(bundle.path),
    title: `replay of the capture ${basename(bundle.path)} (${source || 'unknown source'}, ${m.capturedAt ?? 'undated'})`,
    purpose: 'replay',
    description: [
      `Imported by netrepro import from ${basename(bundle.path)} (format ${m.format}, written by netrepro ${m.netrepro ?? '?'}${m.redacted ? ', redacted' : ''}).`,
      'Each node holds its captured iptables tables, routes, rules, sysctls, br_netfilter and conntrack entries; every probe',
      'is expected ok, so the ones the captured state breaks fail with their mismatch. Add the fix under `fixes`',
      '(its steps and what every probe observes after it) and set the baseline to what the replay showed: a regression scenario.',
    ].join(' '),
    topology,
    probes,
    baseline: { expect },
  };
}

/** The scenario as YAML: the captured rules as literal blocks, as iptables-save printed them. */
export function scenarioYaml(scenario: ScenarioInput, schemaPath?: string): string {
  const header = schemaPath ? `# yaml-language-server: $schema=${schemaPath}\n` : '';
  return `${header}${stringify(scenario, {
    blockQuote: 'literal',
    lineWidth: 0,
  })}`;
}

function scenarioId(path: string): string {
  const base = basename(path).replace(/\.tar\.gz$|\.tgz$/, '');
  const id = `replay-${base}`
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-+/g, '-')
    .slice(0, 63)
    .replace(/-+$/, '');
  return id;
}

/**
 * The scenario with each node's captured rules and conntrack entries moved out to `DIR/NODE/` (relative to the
 * scenario file, as the bundle names them), for a state too large to carry inline; `files` is what to write.
 */
export function withStateDirectories(
  scenario: ScenarioInput,
  dir: string,
): { scenario: ScenarioInput; files: Map<string, string> } {
  const files = new Map<string, string>();
  const nodes = scenario.topology.nodes.map((n) => {
    if (!n.captured) return n;
    const { iptables = '', conntrack = [], ...rest } = n.captured;
    const state = `${dir}/${n.name}`;
    files.set(`${state}/${STATE_FILES.iptables}`, iptables);
    if (conntrack.length > 0) files.set(`${state}/${STATE_FILES.conntrack}`, `${conntrack.join('\n')}\n`);
    return { ...n, captured: { ...rest, state } };
  });
  return { scenario: { ...scenario, topology: { ...scenario.topology, nodes } }, files };
}
