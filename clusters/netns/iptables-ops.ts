// What a node component does to iptables when it starts, as data: the lab runs the operations with
// the iptables tools in the node's namespace, `netrepro render` runs them on an in-memory table
// model. One list of operations, two executors: what render prints is what the lab installs.
import type { Target } from '../provider.ts';

export type Table = 'filter' | 'nat';

export type IptablesOp =
  /** kube-proxy's EnsureRule(Prepend): `iptables -C`, then `-I CHAIN 1` only if the rule is missing. */
  | { op: 'ensure-first'; table: Table; chain: string; spec: string }
  /** flanneld's rules: `iptables -C`, then `-A` only if missing. */
  | { op: 'ensure-last'; table: Table; chain: string; spec: string }
  /** Deletes the rule when present (kube-proxy's start-up IPVS cleanup). */
  | { op: 'delete'; table: Table; chain: string; spec: string }
  /** Deletes every built-in-chain rule jumping to a chain with this prefix (Cilium removes its old feeders). */
  | { op: 'delete-jumps'; prefix: string }
  /** `iptables-restore --noflush`: chain lines flush and create, -A appends, -I inserts. */
  | { op: 'restore'; payload: string }
  /** A reboot: every table empty, built-in policies as the node sets them at boot. */
  | { op: 'reset'; forwardPolicy: 'ACCEPT' | 'DROP' };

const BUILTINS: Record<Table, string[]> = {
  filter: ['INPUT', 'FORWARD', 'OUTPUT'],
  nat: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
};

/** Runs the operations on a real node, with the iptables tools. */
export async function applyOps(node: Target, ops: readonly IptablesOp[]): Promise<void> {
  for (const o of ops) {
    switch (o.op) {
      case 'ensure-first':
      case 'ensure-last': {
        const spec = specArgs(o.spec);
        const present = await node.exec(['iptables', '-w', '-t', o.table, '-C', o.chain, ...spec], { reject: false });
        if (present.exitCode === 0) break;
        const add = o.op === 'ensure-first' ? ['-I', o.chain, '1'] : ['-A', o.chain];
        await node.exec(['iptables', '-w', '-t', o.table, ...add, ...spec]);
        break;
      }
      case 'delete': {
        await node.exec(['iptables', '-w', '-t', o.table, '-D', o.chain, ...specArgs(o.spec)], { reject: false });
        break;
      }
      case 'delete-jumps': {
        const save = await node.exec(['iptables-save']);
        await node.exec(['iptables-restore', '--noflush'], { input: deleteJumpsPayload(save.stdout, o.prefix) });
        break;
      }
      case 'restore':
        await node.exec(['iptables-restore', '--noflush'], { input: o.payload });
        break;
      case 'reset':
        await node.exec(['iptables-restore'], { input: resetPayload(o.forwardPolicy) });
        break;
    }
  }
}

/**
 * A fresh node's boot (operations that begin with a reset) in two iptables-restore calls instead of a
 * process or two per operation. After the reset the node's tables are exactly the model's, so whether
 * an ensured or deleted rule is there (what `iptables -C` would answer) is read from the model, and
 * every operation becomes restore lines, applied in order. What the node ends up with is still
 * compared with the render on real nodes (test/lab/render-matches-lab.test.ts).
 */
export async function applyBoot(node: Target, ops: readonly IptablesOp[]): Promise<void> {
  const [reset, ...rest] = ops;
  if (reset?.op !== 'reset' || rest.some((o) => o.op === 'reset' || o.op === 'delete-jumps')) return applyOps(node, ops);
  const model = new IptablesModel().apply([reset]);
  const blocks: string[] = [];
  for (const o of rest) {
    if (o.op === 'ensure-first' || o.op === 'ensure-last') {
      if (!model.has(o.table, o.chain, o.spec)) blocks.push(`*${o.table}\n${o.op === 'ensure-first' ? `-I ${o.chain} 1` : `-A ${o.chain}`} ${o.spec}\nCOMMIT\n`);
    } else if (o.op === 'delete') {
      if (model.has(o.table, o.chain, o.spec)) blocks.push(`*${o.table}\n-D ${o.chain} ${o.spec}\nCOMMIT\n`);
    } else if (o.op === 'restore') {
      blocks.push(o.payload.endsWith('\n') ? o.payload : `${o.payload}\n`);
    }
    model.apply([o]);
  }
  await node.exec(['iptables-restore'], { input: resetPayload(reset.forwardPolicy) });
  if (blocks.length > 0) await node.exec(['iptables-restore', '--noflush'], { input: blocks.join('') });
}

function resetPayload(forwardPolicy: 'ACCEPT' | 'DROP'): string {
  return (['filter', 'nat'] as const)
    .map((t) => [`*${t}`, ...BUILTINS[t].map((c) => `:${c} ${t === 'filter' && c === 'FORWARD' ? forwardPolicy : 'ACCEPT'} [0:0]`), 'COMMIT'].join('\n'))
    .join('\n') + '\n';
}

/** A restore payload deleting every rule of a built-in chain that jumps to a chain named `prefix...`. */
export function deleteJumpsPayload(save: string, prefix: string): string {
  const out: string[] = [];
  const jump = new RegExp(` -j ${prefix.replace(/[-_]/g, '\\$&')}`);
  for (const line of save.split('\n')) {
    if (line.startsWith('*') || line === 'COMMIT') out.push(line);
    else if (/^-A (PREROUTING|INPUT|FORWARD|OUTPUT|POSTROUTING) /.test(line) && jump.test(line)) out.push(line.replace(/^-A /, '-D '));
  }
  return out.join('\n') + '\n';
}

/** A rule spec in save form as argv (quoted comments become one word). */
export function specArgs(spec: string): string[] {
  const words: string[] = [];
  for (const m of spec.matchAll(/"([^"]*)"|(\S+)/g)) words.push(m[1] ?? m[2] ?? '');
  return words;
}

interface ModelTable {
  policies: Map<string, string>;
  chains: Map<string, string[]>;
}

/** An in-memory iptables (filter and nat) that prints what `iptables-save` would print. */
export class IptablesModel {
  private readonly tables = new Map<Table, ModelTable>();

  constructor() {
    this.apply([{ op: 'reset', forwardPolicy: 'ACCEPT' }]);
  }

  apply(ops: readonly IptablesOp[]): this {
    for (const o of ops) {
      switch (o.op) {
        case 'ensure-first':
        case 'ensure-last': {
          const rules = this.chain(o.table, o.chain);
          if (rules.includes(o.spec)) break;
          if (o.op === 'ensure-first') rules.unshift(o.spec);
          else rules.push(o.spec);
          break;
        }
        case 'delete': {
          const rules = this.chain(o.table, o.chain);
          const i = rules.indexOf(o.spec);
          if (i >= 0) rules.splice(i, 1);
          break;
        }
        case 'delete-jumps':
          for (const t of this.tables.keys()) {
            for (const b of BUILTINS[t]) {
              const rules = this.chain(t, b);
              const kept = rules.filter((r) => !new RegExp(`(^| )-j ${o.prefix}`).test(r));
              rules.splice(0, rules.length, ...kept);
            }
          }
          break;
        case 'restore':
          this.restore(o.payload);
          break;
        case 'reset':
          for (const t of ['filter', 'nat'] as const) {
            this.tables.set(t, {
              policies: new Map(BUILTINS[t].map((c) => [c, t === 'filter' && c === 'FORWARD' ? o.forwardPolicy : 'ACCEPT'])),
              chains: new Map(BUILTINS[t].map((c) => [c, []])),
            });
          }
          break;
      }
    }
    return this;
  }

  /** Whether `spec` is a rule of `chain` (what `iptables -C` answers for a rule in save form). */
  has(table: Table, chain: string, spec: string): boolean {
    return this.tables.get(table)?.chains.get(chain)?.includes(spec) ?? false;
  }

  /** iptables-save output (without the date comments), tables in the order given. */
  save(tables: readonly Table[] = ['filter', 'nat']): string {
    const out: string[] = [];
    for (const t of tables) {
      const table = this.tables.get(t)!;
      const users = [...table.chains.keys()].filter((c) => !BUILTINS[t].includes(c)).sort();
      out.push(`*${t}`, ...BUILTINS[t].map((c) => `:${c} ${table.policies.get(c)} [0:0]`), ...users.map((c) => `:${c} - [0:0]`));
      for (const c of [...BUILTINS[t], ...users]) out.push(...table.chains.get(c)!.map((r) => `-A ${c} ${r}`));
      out.push('COMMIT');
    }
    return out.join('\n') + '\n';
  }

  private chain(table: Table, chain: string): string[] {
    const t = this.tables.get(table)!;
    let rules = t.chains.get(chain);
    if (!rules) t.chains.set(chain, (rules = []));
    return rules;
  }

  private restore(payload: string): void {
    let table: Table = 'filter';
    for (const line of payload.split('\n')) {
      if (line.startsWith('*')) table = line.slice(1) as Table;
      else if (line.startsWith(':')) {
        const name = line.slice(1).split(' ')[0]!;
        this.chain(table, name).length = 0;
      } else {
        const m = /^-([AID]) (\S+)(?: (\d+))? (.*)$/.exec(line);
        if (!m) continue;
        const [, verb, chain, index, spec] = m as unknown as [string, string, string, string | undefined, string];
        const rules = this.chain(table, chain);
        if (verb === 'A') rules.push(spec);
        else if (verb === 'I') rules.splice(Number(index ?? 1) - 1, 0, spec);
        else if (rules.includes(spec)) rules.splice(rules.indexOf(spec), 1);
      }
    }
  }
}
