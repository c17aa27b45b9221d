// A preserve scenario's faulted probes must cross what the fault changed: a chain it added or rewrote, or a jump
// into one, counts their packets; otherwise the phase fails, and a rewrite during the probes is not judged.
import { describe, expect, it } from 'vitest';
import {
  changedChains,
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
  const before = reading('node-a', save(`[0:0] ${JUMP}`, `[0:0] ${OTHER}`, `[0:0] ${SEP1}`));
  const atFault = reading(
    'node-a',
    save(`[0:0] ${JUMP}`, `[0:0] ${OTHER}`, `[0:0] ${SEP2}`, `[0:0] ${SEP1}`, `[0:0] ${DNAT2}`),
  );

  it('holds when the probes counted packets on the change, naming the change before the jump into it', () => {
    const end = reading(
      'node-a',
      save(`[3:0] ${JUMP}`, `[0:0] ${OTHER}`, `[1:0] ${SEP2}`, `[2:0] ${SEP1}`, `[1:0] ${DNAT2}`),
    );
    const r = judgeFaultPath([before], [atFault], [end]);
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
    const r = judgeFaultPath([before], [atFault], [end]);
    expect(r.matched).toBe(false);
    expect(r.unreadable).toBeUndefined();
    expect(r.observed).toMatch(
      /^no rule on the fault's change counted a packet while the probes ran \(changed: nat\/KUBE-SEP-2 on node-a, nat\/KUBE-SVC-A on node-a\): the probes go where/,
    );
  });

  it('fails when the fault changed no rule on any node', () => {
    const r = judgeFaultPath([before], [before], [before]);
    expect(r.matched).toBe(false);
    expect(r.observed).toMatch(/^the fault changed no iptables rule on any node/);
  });

  it('cannot tell when the rules were rewritten while the probes ran (counters start again)', () => {
    const synced = judgeFaultPath(
      [before],
      [{ ...atFault, syncs: 4 }],
      [{ ...reading('node-a', save(`[3:0] ${JUMP}`)), syncs: 5 }],
    );
    expect(synced).toMatchObject({ matched: false, unreadable: true });
    expect(synced.observed).toMatch(/kube-proxy sync count 4 -> 5/);
    const rewritten = judgeFaultPath([before], [atFault], [before]);
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
    const r = judgeFaultPath([before, quiet], [atFault, quiet], [end, busy]);
    expect(r.matched).toBe(true);
    expect(r.on).toBe('node/node-a, node/node-b');
    expect(r.evidence.every((e) => e.startsWith('node-a: '))).toBe(true);
  });
});
