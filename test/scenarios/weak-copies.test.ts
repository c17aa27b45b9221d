// Copies of shipped scenarios weakened the way a careless edit would weaken them: the gate and `mutate`
// must refuse to call them healthy. (Bounds that hold for every value never get this far: validation
// refuses them, test/unit/falsifiable.test.ts.)
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { NetnsProvider } from '../../src/providers/netns/netns-provider.ts';
import { runGate } from '../../src/engine/gate/run-gate.ts';
import { parseScenario } from '../../src/model/load-scenario.ts';
import { loadProfile } from '../../src/model/profile.ts';
import { mutateScenario } from '../../src/engine/mutate/mutate-scenario.ts';
import { labSkipReason } from '../lab-support.ts';

const provider = new NetnsProvider();
const signal = new AbortController().signal;
const copyOf = async (id: string, edit: (text: string) => string) => {
  const text = await readFile(new URL(`../../scenarios/${id}.yaml`, import.meta.url), 'utf8');
  const edited = edit(text);
  expect(edited).not.toBe(text);
  return { file: `${id}-copy.yaml`, scenario: parseScenario(edited, `${id}-copy.yaml`) };
};

describe.skipIf(labSkipReason)('weakened copies on the netns lab', () => {
  it('the gate does not read a fault that also breaks a control as immune or unchanged', async () => {
    // the fault also drops node-b's forwarded pod traffic: the pod-to-pod control breaks under every profile
    const copy = await copyOf('cilium-forward-race-cross-node', (t) =>
      t.replace(
        '    - reboot: { node: node-a, order: [cilium, kube-proxy] }\n',
        '    - reboot: { node: node-a, order: [cilium, kube-proxy] }\n    - run: { on: node/node-b, cmd: "iptables -I FORWARD -d 10.244.2.0/24 -j DROP" }\n',
      ),
    );
    const result = await runGate([copy], await loadProfile('kube-proxy-1.14'), await loadProfile('kube-proxy-1.15'), {
      provider,
      signal,
    });
    expect(result.scenarios).toEqual([
      expect.objectContaining({
        baseline: 'broken',
        candidate: 'broken',
        change: 'unjudged',
        baselineDecidedBy: ['pod-other-node'],
        candidateDecidedBy: ['pod-other-node'],
      }),
    ]);
    expect(result.scenarios[0]!.candidateReason).toMatch(/^a control broke: pod-other-node: expected ok/);
  });

  it('mutate kills an absence whose pattern never matches and a counter that rises with any traffic', async () => {
    const copy = await copyOf('br-netfilter-clusterip-same-node', (t) =>
      t.replace('    pod-ip: { outcome: ok, servedBy: web }\n\nfixes:', () =>
        [
          '    pod-ip: { outcome: ok, servedBy: web }',
          '  checks:',
          "    - { id: never-there, on: node/node-a, cmd: iptables-save -t nat, matches: 'NO-SUCH-CHAIN', expect: { count: 0 } }",
          // the bytes the client's bridge port sent: any traffic at all raises it
          String.raw`    - { id: any-traffic, on: node/node-a, cmd: 'ip -s -o link show dev {veth/client}', counter: 'TX:[^\\]*\\\s+(\d+)', expect: { delta: { min: 1 } } }`,
          '',
          'fixes:',
        ].join('\n'),
      ),
    );
    const { mutants, originalFailure } = await mutateScenario(copy, { provider, signal });
    expect(originalFailure).toBeUndefined();
    const survivors = mutants.filter((m) => m.status === 'survived');
    // the absence also holds without the fault: it depends on nothing
    expect(survivors.map((m) => m.mutation).sort()).toEqual([
      'absence-matches:fault/never-there',
      'needs-fault:check/any-traffic',
      'needs-fault:check/never-there',
    ]);
    expect(survivors.find((m) => m.mutation.startsWith('absence'))!.reason).toMatch(
      /^this pattern never matches in any phase of any variant/,
    );
    expect(survivors.find((m) => m.mutation === 'needs-fault:check/any-traffic')!.reason).toMatch(
      /^still holds without the fault: expected delta >= 1/,
    );
    // the copy's own verdict mutants are still killed: only the weak checks survive
    expect(mutants.filter((m) => m.status === 'killed').map((m) => m.mutation)).toEqual(
      expect.arrayContaining(['fault-removed', 'fix-removed:load-br-netfilter', 'needs-fault:clusterip']),
    );
  });
});
