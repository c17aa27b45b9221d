// What a node component does to iptables when it starts, as data: the lab runs the operations with
// the iptables tools in the node's namespace, `netrepro render` runs them on an in-memory table
// model. One list of operations, two executors: what render prints is what the lab installs.
import type { Target } from '../contract/provider.ts';

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

/**
 * Runs the operations on a real node in at most three processes, where one `iptables` call per
 * check and per insert took 10-20 for a kube-proxy start: the node's tables are read once
 * (`iptables-save`, or `save` when the caller has just read it; not needed after a reset), loaded
 * into the model, and each operation becomes restore lines decided on the model (an ensured rule
 * already there, what `iptables -C` answers, is the same rule text in save form), all applied in
 * order by one `iptables-restore --noflush`. A reset is its own plain `iptables-restore` (it empties
 * the tables). Components write only filter and nat, the tables the model holds. That the model's
 * answers are the kernel's is checked on real nodes: test/lab/render-matches-lab.test.ts (a boot is
 * the render, a second start changes nothing).
 */
export async function applyOps(node: Target, ops: readonly IptablesOp[], save?: string): Promise<void> {
  let model: IptablesModel | undefined;
  let blocks: string[] = [];
  const flush = async () => {
    if (blocks.length > 0) await node.exec(['iptables-restore', '--noflush'], { input: blocks.join('') });
    blocks = [];
  };
  for (const o of ops) {
    if (o.op === 'reset') {
      await flush();
      await node.exec(['iptables-restore'], { input: resetPayload(o.forwardPolicy) });
      model = new IptablesModel().apply([o]);
      continue;
    }
    model ??= IptablesModel.fromSave(save ?? (await node.exec(['iptables-save'])).stdout);
    const block = model.restoreLines(o);
    if (block.length > 0) blocks.push(block);
    model.apply([o]);
  }
  await flush();
}

function resetPayload(forwardPolicy: 'ACCEPT' | 'DROP'): string {
  return `${(['filter', 'nat'] as const)
    .map((t) =>
      [
        `*${t}`,
        ...BUILTINS[t].map((c) => `:${c} ${t === 'filter' && c === 'FORWARD' ? forwardPolicy : 'ACCEPT'} [0:0]`),
        'COMMIT',
      ].join('\n'),
    )
    .join('\n')}\n`;
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

  /** A node's filter and nat tables as `iptables-save` printed them (a save is restore input; other tables left out). */
  static fromSave(save: string): IptablesModel {
    return new IptablesModel().apply([{ op: 'restore', payload: save }]);
  }

  /**
   * What `o` does to these tables as iptables-restore --noflush lines (one block per table; empty when
   * it changes nothing): ensures and deletes decided here, as the check before each would decide.
   */
  restoreLines(o: IptablesOp): string {
    const block = (table: Table, lines: string[]) =>
      lines.length > 0 ? `*${table}\n${lines.join('\n')}\nCOMMIT\n` : '';
    switch (o.op) {
      case 'ensure-first':
      case 'ensure-last':
        return this.has(o.table, o.chain, o.spec)
          ? ''
          : block(o.table, [`${o.op === 'ensure-first' ? `-I ${o.chain} 1` : `-A ${o.chain}`} ${o.spec}`]);
      case 'delete':
        return this.has(o.table, o.chain, o.spec) ? block(o.table, [`-D ${o.chain} ${o.spec}`]) : '';
      case 'delete-jumps':
        return (['filter', 'nat'] as const)
          .map((t) =>
            block(
              t,
              this.jumpsTo(t, o.prefix).map(([chain, spec]) => `-D ${chain} ${spec}`),
            ),
          )
          .join('');
      case 'restore':
        return o.payload.endsWith('\n') ? o.payload : `${o.payload}\n`;
      case 'reset':
        throw new Error('a reset is a plain iptables-restore, not --noflush lines');
    }
  }

  /** Rules of built-in chains that jump to a chain named `prefix...`, in order. */
  private jumpsTo(table: Table, prefix: string): [string, string][] {
    const jump = new RegExp(`(^| )-j ${prefix}`);
    return BUILTINS[table].flatMap((c) =>
      this.chain(table, c)
        .filter((r) => jump.test(r))
        .map((r): [string, string] => [c, r]),
    );
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
            for (const [chain, spec] of this.jumpsTo(t, o.prefix))
              this.chain(t, chain).splice(this.chain(t, chain).indexOf(spec), 1);
          }
          break;
        case 'restore':
          this.restore(o.payload);
          break;
        case 'reset':
          for (const t of ['filter', 'nat'] as const) {
            this.tables.set(t, {
              policies: new Map(
                BUILTINS[t].map((c) => [c, t === 'filter' && c === 'FORWARD' ? o.forwardPolicy : 'ACCEPT']),
              ),
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
      out.push(
        `*${t}`,
        ...BUILTINS[t].map((c) => `:${c} ${table.policies.get(c)} [0:0]`),
        ...users.map((c) => `:${c} - [0:0]`),
      );
      for (const c of [...BUILTINS[t], ...users]) out.push(...table.chains.get(c)!.map((r) => `-A ${c} ${r}`));
      out.push('COMMIT');
    }
    return `${out.join('\n')}\n`;
  }

  private chain(table: Table, chain: string): string[] {
    const t = this.tables.get(table)!;
    let rules = t.chains.get(chain);
    if (!rules) t.chains.set(chain, (rules = []));
    return rules;
  }

  /** `iptables-restore --noflush` of `payload` (or of a whole save): tables other than filter and nat are skipped. */
  private restore(payload: string): void {
    let table: Table | undefined = 'filter';
    for (const line of payload.split('\n')) {
      if (line.startsWith('*')) {
        const name = line.slice(1);
        table = name === 'filter' || name === 'nat' ? name : undefined;
      } else if (!table) continue;
      else if (line.startsWith(':')) {
        const [name = '', policy = '-'] = line.slice(1).split(' ');
        this.chain(table, name).length = 0;
        if (policy !== '-') this.tables.get(table)!.policies.set(name, policy);
      } else if (/^-X \S+$/.test(line)) {
        this.tables.get(table)!.chains.delete(line.slice(3));
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
