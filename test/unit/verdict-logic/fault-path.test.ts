// A preserve scenario's faulted probes must cross what the fault changed: a chain it added or rewrote, or a jump
// into one, counts their packets; otherwise the phase fails, and a rewrite during the probes is not judged.
import { describe, expect, it } from 'vitest';
import type { StartedCluster } from '../../../src/contract/provider.ts';
import {
  changedChains,
  FaultPath,
  judgeFaultPath,
  rulesOnTheChange,
  savedRules,
  type NodeReading,
} from '../../../src/observe/expect/fault-path.ts';

const save = (...rules: string[]) => ['*nat', ':PREROUTING ACCEPT [0:0]', ...rules, 'COMMIT', ''].join('\n');
const JUMP = '-A KUBE-SERVICES -d 10.96.0.50/32 -p tcp -j KUBE-SVC-A';
const SEP1 = '-A KUBE-SVC-A -j KUBE-SEP-1';
const SEP2 = '-A KUBE-SVC-A -m statistic --mode random --probability 0.5 -j KUBE-SEP-2';
const DNAT2 = '-A KUBE-SEP-2 -p tcp -j DNAT --to-destination 10.244.1.4:9376';
const OTHER = '-A KUBE-SERVICES -d 10.96.0.60/32 -p tcp -j KUBE-SVC-B';

const reading = (node: string, text: string, syncs?: number): NodeReading => ({ node, rules: savedRules(text), syncs });

describe('the rules on a fault change', () => {
  it('reads each rule with its table, chain and packets, a rule without arguments too', () => {
    expect(savedRules(`${save(`[7:420] ${JUMP}`)}*filter\n[3:0] -A KUBE-FIREWALL\n`)).toEqual([
      { table: 'nat', chain: 'KUBE-SERVICES', text: JUMP, packets: 7 },
      { table: 'filter', chain: 'KUBE-FIREWALL', text: '-A KUBE-FIREWALL', packets: 3 },
    ]);
  });

  it('finds added, rewritten and emptied chains, and the rules in them or jumping into them', () => {
    const before = savedRules(save(`[0:0] ${JUMP}`, `[0:0] ${OTHER}`, `[0:0] ${SEP1}`, '[0:0] -A KUBE-SEP-9 -j DROP'));
    const after = savedRules(
      save(`[0:0] ${JUMP}`, `[0:0] ${OTHER}`, `[0:0] ${SEP2}`, `[0:0] ${SEP1}`, `[0:0] ${DNAT2}`),
    );
    const changed = changedChains(before, after);
    expect([...changed].sort()).toEqual(['nat/KUBE-SEP-2', 'nat/KUBE-SEP-9', 'nat/KUBE-SVC-A']);
    expect(rulesOnTheChange(after, changed).map((r) => r.text)).toEqual([JUMP, SEP2, SEP1, DNAT2]);
  });
});

describe('judging a preserve scenario by its fault path', () => {
  // built in each test: a reading that throws fails that test, not the file's collection
  const unfaulted = () => reading('node-a', save(`[0:0] ${JUMP}`, `[0:0] ${OTHER}`, `[0:0] ${SEP1}`));
  const atFault = () =>
    reading('node-a', save(`[0:0] ${JUMP}`, `[0:0] ${OTHER}`, `[0:0] ${SEP2}`, `[0:0] ${SEP1}`, `[0:0] ${DNAT2}`));

  it('holds when the probes counted packets on the change, naming the change before the jump into it', () => {
    const end = reading(
      'node-a',
      save(`[3:0] ${JUMP}`, `[0:0] ${OTHER}`, `[1:0] ${SEP2}`, `[2:0] ${SEP1}`, `[1:0] ${DNAT2}`),
    );
    const r = judgeFaultPath([unfaulted()], [atFault()], [end]);
    expect(r.matched).toBe(true);
    expect(r.observed).toBe(`the probes crossed the fault's change: node-a: [2 packets] ${SEP1} (nat)`);
    expect(r.evidence.slice(2)).toEqual([`node-a: [3 packets] ${JUMP} (nat)`, `node-a: [1 packets] ${SEP2} (nat)`]);
    expect(r.id).toBe('fault-path:crossed');
  });

  it('fails when only rules off the change counted packets', () => {
    const end = reading(
      'node-a',
      save(`[0:0] ${JUMP}`, `[5:0] ${OTHER}`, `[0:0] ${SEP2}`, `[0:0] ${SEP1}`, `[0:0] ${DNAT2}`),
    );
    const r = judgeFaultPath([unfaulted()], [atFault()], [end]);
    expect(r.matched).toBe(false);
    expect(r.unreadable).toBeUndefined();
    expect(r.observed).toMatch(
      /^no rule on the fault's change counted a packet while the probes ran \(changed: nat\/KUBE-SEP-2 on node-a, nat\/KUBE-SVC-A on node-a\): the probes go where/,
    );
  });

  it('fails when the fault changed no rule on any node', () => {
    const r = judgeFaultPath([unfaulted()], [unfaulted()], [unfaulted()]);
    expect(r.matched).toBe(false);
    expect(r.observed).toMatch(/^the fault changed no iptables rule on any node/);
    expect(r.evidence).toEqual([]);
  });

  it('cannot tell when the rules were rewritten while the probes ran (counters start again)', () => {
    const synced = judgeFaultPath(
      [unfaulted()],
      [{ ...atFault(), syncs: 4 }],
      [{ ...reading('node-a', save(`[3:0] ${JUMP}`)), syncs: 5 }],
    );
    expect(synced).toMatchObject({ matched: false, unreadable: true });
    expect(synced.observed).toMatch(/kube-proxy sync count 4 -> 5/);
    const rewritten = judgeFaultPath([unfaulted()], [atFault()], [unfaulted()]);
    expect(rewritten).toMatchObject({ matched: false, unreadable: true });
    expect(rewritten.observed).toMatch(/its chains changed/);
  });

  it('counts a node the fault did not change for nothing, and judges the one it changed', () => {
    const quiet = reading('node-b', save(`[0:0] ${OTHER}`));
    const busy = reading('node-b', save(`[9:0] ${OTHER}`));
    const end = reading(
      'node-a',
      save(`[1:0] ${JUMP}`, `[0:0] ${OTHER}`, `[0:0] ${SEP2}`, `[1:0] ${SEP1}`, `[0:0] ${DNAT2}`),
    );
    const r = judgeFaultPath([unfaulted(), quiet], [atFault(), quiet], [end, busy]);
    expect(r.matched).toBe(true);
    expect(r.on).toBe('node/node-a, node/node-b');
    expect(r.evidence.every((e) => e.startsWith('node-a: '))).toBe(true);
  });
});

describe('judging, node by node', () => {
  const unfaulted = () => reading('node-a', save(`[0:0] ${JUMP}`, `[0:0] ${SEP1}`));
  const atFault = () => reading('node-a', save(`[5:0] ${JUMP}`, `[0:0] ${SEP2}`, `[4:0] ${SEP1}`));

  it('a rule counts packets the probes sent, not those it had counted before them', () => {
    const r = judgeFaultPath([unfaulted()], [atFault()], [atFault()]);
    expect(r).toEqual({
      id: 'fault-path:crossed',
      on: 'node/node-a',
      argv: ['iptables-save', '-c'],
      expected: 'a rule the fault added or rewrote, or a jump into its chain, counts packets during the probes',
      observed:
        "no rule on the fault's change counted a packet while the probes ran (changed: nat/KUBE-SVC-A on node-a): the probes go where the fault does not reach, so they prove nothing about it",
      matched: false,
      evidence: [],
    });
    const crossed = reading('node-a', save(`[6:0] ${JUMP}`, `[0:0] ${SEP2}`, `[4:0] ${SEP1}`));
    expect(judgeFaultPath([unfaulted()], [atFault()], [crossed]).evidence).toEqual([
      `node-a: [1 packets] ${JUMP} (nat)`,
    ]);
  });

  it('each node is compared with its own readings, in whatever order the nodes come', () => {
    const quiet = reading('node-b', save(`[0:0] ${OTHER}`));
    const end = reading('node-a', save(`[6:0] ${JUMP}`, `[0:0] ${SEP2}`, `[4:0] ${SEP1}`));
    const r = judgeFaultPath([quiet, unfaulted()], [quiet, atFault()], [quiet, end]);
    expect(r).toMatchObject({ matched: true, on: 'node/node-b, node/node-a' });
  });

  it('a node the fault did not change is not judged, whatever kube-proxy did to it during the probes', () => {
    const quiet = reading('node-b', save(`[0:0] ${OTHER}`), 1);
    const synced = reading('node-b', save(`[0:0] ${OTHER}`), 2);
    const end = reading('node-a', save(`[6:0] ${JUMP}`, `[0:0] ${SEP2}`, `[4:0] ${SEP1}`));
    expect(judgeFaultPath([quiet, unfaulted()], [quiet, atFault()], [synced, end]).matched).toBe(true);
  });

  it('a sync during the probes that rewrote the same rules still reset their counters: not judged', () => {
    const r = judgeFaultPath([unfaulted()], [{ ...atFault(), syncs: 1 }], [{ ...atFault(), syncs: 2 }]);
    expect(r).toEqual({
      id: 'fault-path:crossed',
      on: 'node/node-a',
      argv: ['iptables-save', '-c'],
      expected: 'a rule the fault added or rewrote, or a jump into its chain, counts packets during the probes',
      observed:
        'the rules of node-a were rewritten while the probes ran (kube-proxy sync count 1 -> 2), which starts their counters again: whether the probes crossed the fault cannot be told',
      matched: false,
      evidence: [],
      unreadable: true,
    });
  });

  it('the same rule twice in a chain is two rules, each with its own counter', () => {
    const twice = (a: number, b: number, c: number) =>
      reading('node-a', save(`[0:0] ${JUMP}`, `[${a}:0] ${SEP2}`, `[${b}:0] ${SEP2}`, `[${c}:0] ${SEP2}`));
    const r = judgeFaultPath([unfaulted()], [twice(0, 0, 0)], [twice(0, 12, 0)]);
    expect(r.evidence).toEqual([`node-a: [12 packets] ${SEP2} (nat)`]);
  });

  it('a rule without a jump is on the change only in a changed chain', () => {
    const plain = '-A KUBE-FIREWALL -m comment --comment "no jump"';
    const was = reading('node-a', `${save(`[0:0] ${JUMP}`, `[0:0] ${SEP1}`)}*filter\n[0:0] ${plain}\nCOMMIT\n`);
    const at = reading('node-a', `${save(`[0:0] ${JUMP}`, `[0:0] ${SEP2}`)}*filter\n[0:0] ${plain}\nCOMMIT\n`);
    const end = reading('node-a', `${save(`[0:0] ${JUMP}`, `[0:0] ${SEP2}`)}*filter\n[3:0] ${plain}\nCOMMIT\n`);
    expect(judgeFaultPath([was], [at], [end]).matched).toBe(false);
  });
});

describe("reading a cluster's nodes at the three moments", () => {
  /** A cluster whose nodes answer iptables-save with the next text of `saves[node]`; `syncs` per read, when given. */
  function cluster(saves: Record<string, string[]>, syncs?: number[]) {
    const calls: string[] = [];
    const read = new Map<string, number>();
    const c = {
      nodeNames: Object.keys(saves),
      node: (node: string) => ({
        async exec(argv: string[], options: unknown) {
          calls.push(`${node} ${argv.join(' ')} ${JSON.stringify(options)}`);
          const n = read.get(node) ?? 0;
          read.set(node, n + 1);
          return { argv, exitCode: 0, stdout: saves[node]![n]!, stderr: '', timedOut: false, durationMs: 1 };
        },
      }),
      ...(syncs
        ? {
            async kubeProxySyncs(node: string, settled?: boolean) {
              calls.push(`${node} syncs settled=${settled}`);
              return syncs[(read.get(node) ?? 1) - 1];
            },
          }
        : {}),
    };
    return { cluster: c as unknown as StartedCluster, calls };
  }
  const before = save(`[0:0] ${JUMP}`, `[0:0] ${SEP1}`);
  const atFault = save(`[0:0] ${JUMP}`, `[0:0] ${SEP2}`, `[0:0] ${SEP1}`, `[0:0] ${DNAT2}`);
  const crossed = save(`[1:0] ${JUMP}`, `[0:0] ${SEP2}`, `[1:0] ${SEP1}`, `[0:0] ${DNAT2}`);

  it("reads every node's rules with their counters (10 s each), the sync count settled only after the fault", async () => {
    const { cluster: c, calls } = cluster({ 'node-a': [before, atFault, crossed] }, [3, 3, 3]);
    const path = new FaultPath(c);
    await path.read();
    await path.read(true);
    await path.read();
    expect(calls.filter((x) => x.includes('syncs'))).toEqual([
      'node-a syncs settled=false',
      'node-a syncs settled=true',
      'node-a syncs settled=false',
    ]);
    expect(calls.filter((x) => x.includes('iptables'))).toEqual(
      Array(3).fill('node-a iptables-save -c {"timeoutMs":10000}'),
    );
    expect(path.verdict()).toMatchObject({
      matched: true,
      on: 'node/node-a',
      argv: ['iptables-save', '-c'],
      observed: `the probes crossed the fault's change: node-a: [1 packets] ${SEP1} (nat)`,
    });
  });

  it('a sync between the fault and the end of the probes is read as a rewrite', async () => {
    const { cluster: c } = cluster({ 'node-a': [before, atFault, crossed] }, [3, 3, 4]);
    const path = new FaultPath(c);
    for (const settled of [false, true, false]) await path.read(settled);
    expect(path.verdict()).toMatchObject({ unreadable: true, matched: false });
  });

  it('without sync counts (a cluster that cannot say), the rules alone decide', async () => {
    const { cluster: c } = cluster({ 'node-a': [before, atFault, crossed], 'node-b': [before, before, before] });
    const path = new FaultPath(c);
    for (const settled of [false, true, false]) await path.read(settled);
    expect(path.verdict()).toMatchObject({ matched: true, on: 'node/node-a, node/node-b' });
  });

  it('read fewer than three times, nothing can be shown crossed', async () => {
    const { cluster: c } = cluster({ 'node-a': [before, atFault] });
    const path = new FaultPath(c);
    await path.read();
    await path.read(true);
    expect(path.verdict()).toMatchObject({ matched: false, on: 'node/node-a' });
    expect(new FaultPath(c).verdict()).toMatchObject({ matched: false, on: '' });
  });
});
