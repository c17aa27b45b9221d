// A preserve scenario's fault is a change traffic must survive (a Service's endpoints added or cycled). Its
// faulted probes prove that only if they cross the change: a probe sent where the change does not reach passes
// whatever the fault did. So each node's rules are read before the fault, after it and after the probes: a chain
// the fault added or rewrote, or a rule that jumps into one, must count packets while the probes run.
import type { StartedCluster } from '../../contract/provider.ts';
import type { CheckResult } from './run-checks.ts';

/** One rule of `iptables-save -c`, with its packet counter. */
export interface SavedRule {
  table: string;
  chain: string;
  /** The rule as `-A CHAIN ...`, without its counters. */
  text: string;
  packets: number;
}

/** The result's id: a colon keeps it apart from every check id a file can write. */
export const FAULT_PATH_CHECK = 'fault-path:crossed';

const ARGV = ['iptables-save', '-c'];

export function savedRules(save: string): SavedRule[] {
  const rules: SavedRule[] = [];
  let table = '';
  for (const line of save.split('\n')) {
    if (line.startsWith('*')) table = line.slice(1).trim();
    const m = /^\[(\d+):\d+\] (-A (\S+)(?: .*)?)$/.exec(line);
    if (m) rules.push({ table, chain: m[3]!, text: m[2]!, packets: Number(m[1]) });
  }
  return rules;
}

const chainKey = (r: { table: string; chain: string }) => `${r.table}/${r.chain}`;

/** Each chain's rules in order, as text. */
function chains(rules: readonly SavedRule[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const r of rules) out.set(chainKey(r), [...(out.get(chainKey(r)) ?? []), r.text]);
  return out;
}

/** Chains (`table/CHAIN`) that hold other rules after than before: added, rewritten or emptied. */
export function changedChains(before: readonly SavedRule[], after: readonly SavedRule[]): Set<string> {
  const was = chains(before);
  const now = chains(after);
  const changed = new Set<string>();
  for (const key of new Set([...was.keys(), ...now.keys()])) {
    if ((was.get(key) ?? []).join('\n') !== (now.get(key) ?? []).join('\n')) changed.add(key);
  }
  return changed;
}

const jumpsInto = (r: SavedRule, changed: ReadonlySet<string>) => {
  const target = /\s-[jg] (\S+)/.exec(r.text)?.[1];
  return target !== undefined && changed.has(`${r.table}/${target}`);
};

/** The rules a packet crosses when it crosses the change: those of a changed chain, and jumps into one. */
export function rulesOnTheChange(rules: readonly SavedRule[], changed: ReadonlySet<string>): SavedRule[] {
  return rules.filter((r) => changed.has(chainKey(r)) || jumpsInto(r, changed));
}

/** A rule's key within its node: the same text twice in a chain is two rules. */
function keyed(rules: readonly SavedRule[]): Map<string, SavedRule> {
  const seen = new Map<string, number>();
  const out = new Map<string, SavedRule>();
  for (const r of rules) {
    const base = `${chainKey(r)} ${r.text}`;
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.set(`${base} #${n}`, r);
  }
  return out;
}

export interface NodeReading {
  node: string;
  rules: SavedRule[];
  syncs?: number;
}

/**
 * The verdict from the three readings of every node: the rules on the change that counted packets between the
 * fault and the end of the probes, or why none did, or why it cannot be told (a rewrite reset the counters).
 */
export function judgeFaultPath(
  beforeFault: readonly NodeReading[],
  afterFault: readonly NodeReading[],
  afterProbes: readonly NodeReading[],
): CheckResult {
  const result = (fields: Pick<CheckResult, 'observed' | 'matched' | 'evidence'> & { unreadable?: true }) => ({
    id: FAULT_PATH_CHECK,
    on: afterFault.map((r) => `node/${r.node}`).join(', '),
    argv: ARGV,
    expected: 'a rule the fault added or rewrote, or a jump into its chain, counts packets during the probes',
    ...fields,
  });
  const moved: string[] = [];
  const changedNames: string[] = [];
  for (const at of afterFault) {
    const was = beforeFault.find((r) => r.node === at.node);
    const end = afterProbes.find((r) => r.node === at.node);
    if (!was || !end) continue;
    const changed = changedChains(was.rules, at.rules);
    if (changed.size === 0) continue;
    changedNames.push(...[...changed].sort().map((c) => `${c} on ${at.node}`));
    if (at.syncs !== end.syncs || changedChains(at.rules, end.rules).size > 0) {
      return result({
        observed: `the rules of ${at.node} were rewritten while the probes ran (${at.syncs !== end.syncs ? `kube-proxy sync count ${at.syncs} -> ${end.syncs}` : 'its chains changed'}), which starts their counters again: whether the probes crossed the fault cannot be told`,
        matched: false,
        evidence: [],
        unreadable: true,
      });
    }
    // the same chains as after the fault (a change would have returned above): every rule is there again
    const later = keyed(end.rules);
    const crossed = [...keyed(rulesOnTheChange(at.rules, changed))]
      .map(([key, rule]) => ({ rule, delta: later.get(key)!.packets - rule.packets }))
      .filter((x) => x.delta > 0);
    // the change itself first (a DNAT in a new endpoint chain, say), the jumps into it after
    crossed.sort((a, b) => Number(jumpsInto(a.rule, changed)) - Number(jumpsInto(b.rule, changed)));
    moved.push(...crossed.map((x) => `${at.node}: [${x.delta} packets] ${x.rule.text} (${x.rule.table})`));
  }
  if (changedNames.length === 0) {
    return result({
      observed:
        'the fault changed no iptables rule on any node, so no probe can be shown to cross it: change what traffic must survive, or assert the symptom instead of `purpose: preserve`',
      matched: false,
      evidence: [],
    });
  }
  if (moved.length === 0) {
    return result({
      observed: `no rule on the fault's change counted a packet while the probes ran (changed: ${changedNames.join(', ')}): the probes go where the fault does not reach, so they prove nothing about it`,
      matched: false,
      evidence: [],
    });
  }
  return result({ observed: `the probes crossed the fault's change: ${moved[0]}`, matched: true, evidence: moved });
}

/** Reads every node's rules at the three moments a preserve scenario's faulted phase is judged by. */
export class FaultPath {
  private readonly readings: NodeReading[][] = [];

  constructor(private readonly cluster: StartedCluster) {}

  /**
   * Before the fault's steps, after them (before the probes: `settled`, once the node's kube-proxy has no sync
   * pending, where it says), and after the probes.
   */
  async read(settled = false): Promise<void> {
    this.readings.push(
      await Promise.all(
        this.cluster.nodeNames.map(async (node) => {
          const [saved, syncs] = await Promise.all([
            this.cluster.node(node).exec(ARGV, { timeoutMs: 10_000 }),
            this.cluster.kubeProxySyncs?.(node, settled),
          ]);
          return { node, rules: savedRules(saved.stdout), syncs };
        }),
      ),
    );
  }

  verdict(): CheckResult {
    const [beforeFault = [], afterFault = [], afterProbes = []] = this.readings;
    return judgeFaultPath(beforeFault, afterFault, afterProbes);
  }
}
