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
const copyOf = async (id: string, edit: (text: string) => string, file = `${id}.yaml`) => {
  const text = await readFile(new URL(`../../scenarios/${file}`, import.meta.url), 'utf8');
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

  it('a preserve copy whose probe no longer crosses the fault (the pod to its own address) fails as unobserved', async () => {
    // the hairpin port turned into "traffic survives": the probe goes to the pod's own IP, over its loopback
    const copy = await copyOf(
      'e2e-hairpin-to-self',
      (t) =>
        t
          .replace('probes:', 'purpose: preserve\n\nprobes:')
          .replace('http: { to: svc/hairpin-test, port: 8080 }', 'http: { to: pod/hairpin, port: 8080 }')
          .replace(
            'self-via-service: { outcome: timeout, connected: false }',
            // the check that proves the change happened, which a preserve scenario must have
            "self-via-service: { outcome: ok, servedBy: hairpin }\n  checks:\n    - { id: hairpin-off, on: node/node-a, cmd: bridge -d link show, matches: 'hairpin off', expect: { count: { min: 1 } } }",
          )
          .replace(
            /(fixes:[\s\S]*self-via-service: \{ outcome: ok, servedBy: hairpin \})/,
            "$1\n    checks:\n      - { id: hairpin-on, on: node/node-a, cmd: bridge -d link show, matches: 'hairpin on', expect: { count: { min: 1 } } }",
          ),
      'upstream-e2e/hairpin-to-self.yaml',
    );
    const { runScenario } = await import('../../src/engine/run/run-scenario.ts');
    const r = await runScenario(copy, { provider, signal, emit: () => {} });
    const faulted = r.phases.find((p) => p.name === 'faulted')!;
    expect(r.verdict).toBe('failed');
    expect(faulted.probes[0]!.mismatch).toMatch(
      /^unobserved: none of the probe's packets was captured on the client's interface/,
    );
    // the baseline, whose probe is not judged as a preserved change, still holds
    expect(r.phases.find((p) => p.name === 'baseline')!.status).toBe('passed');
  });

  it('a preserve copy whose probe goes around the change (to the first pod, not the Service) fails its fault path', async () => {
    // every request still lands on the first pod, so the probe passes in every phase; but it never enters the
    // Service's chain that the scale-up rewrote
    const copy = await copyOf(
      'e2e-session-affinity-clusterip',
      (t) =>
        t.replace(
          'http: { to: svc/affinity-clusterip, port: 80 }',
          'http: { to: pod/affinity-clusterip-1, port: 9376 }',
        ),
      'upstream-e2e/session-affinity-clusterip.yaml',
    );
    const { runScenario } = await import('../../src/engine/run/run-scenario.ts');
    const r = await runScenario(copy, { provider, signal, emit: () => {} });
    const faulted = r.phases.find((p) => p.name === 'faulted')!;
    expect(faulted.probes.every((p) => p.matched)).toBe(true);
    expect(faulted.checks.find((c) => c.id === 'fault-path:crossed')).toMatchObject({ matched: false });
    expect(faulted.checks.find((c) => c.id === 'fault-path:crossed')!.observed).toMatch(
      /^no rule on the fault's change counted a packet while the probes ran \(changed: nat\/KUBE-SEP-/,
    );
    expect(r.verdict).toBe('failed');
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
