// An `snat` check in a scenario file: read from a node's SNAT table instead of a command, on a Cilium
// scenario with BPF masquerade, for a flow from a pod; it needs the provider's `snat-table` and nothing else.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../../src/model/load-scenario.ts';
import { packagePath } from '../../src/model/package-root.ts';
import { scenarioRequirements } from '../../src/model/scenario-requirements.ts';

const FILE = packagePath('scenarios/cilium-forward-race-cross-node.yaml');
const SOURCE = readFileSync(FILE, 'utf8');
const SNAT_LINE = '      snat: { from: pod/client, to: host/docs, port: 80 }\n';

/** The cross-node race with its snat check's lines replaced. */
const parseWith = (replace: [string, string][]) => () =>
  parseScenario(
    replace.reduce((s, [a, b]) => {
      expect(s).toContain(a);
      return s.replace(a, b);
    }, SOURCE),
    FILE,
  );

describe('an snat check', () => {
  it("needs the provider's snat-table only: no node exec, no bpffs path", () => {
    const needs = scenarioRequirements(parseScenario(SOURCE, FILE)).filter((r) => r.by.includes('check snat-flows'));
    expect(needs.map((r) => r.capability)).toEqual(['snat-table', 'snat-table', 'snat-table']);
  });

  it('reads either a command or the table', () => {
    expect(parseWith([[SNAT_LINE, `${SNAT_LINE}      cmd: bpftool map show\n`]])).toThrow(/one of them/);
  });

  it('bounds the entries added with expect.delta, on a node, with no pattern of its own', () => {
    expect(parseWith([[SNAT_LINE, `${SNAT_LINE}      matches: 'TCP IN'\n`]])).toThrow(/an snat check is on node/);
    expect(parseWith([['      on: node/node-a\n      snat:', '      on: pod/client\n      snat:']])).toThrow(
      /an snat check is on node/,
    );
  });

  it("is a Cilium scenario's with BPF masquerade, for a flow from a pod to something that exists", () => {
    expect(parseWith([['bpfMasquerade: true', 'bpfMasquerade: false']])).toThrow(
      /Cilium's, filled by its BPF masquerade/,
    );
    expect(parseWith([[SNAT_LINE, '      snat: { from: host/docs, to: pod/web, port: 80 }\n']])).toThrow(
      /the client of a masqueraded flow is a pod/,
    );
    expect(parseWith([[SNAT_LINE, '      snat: { from: pod/client, to: host/nowhere, port: 80 }\n']])).toThrow(
      /unknown host/,
    );
  });
});
