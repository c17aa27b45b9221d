// Phase checks: evidence asserted directly, not only through a probe's outcome. A counter is read
// right before the phase's probes and right after them (a rule's packet count, say); an output
// check counts matching lines after the probes (two maps with the same name, say).
import type { StartedCluster } from '../../contract/provider.ts';
import type { CheckSpec } from '../../model/scenario-schema.ts';
import type { Spawned } from '../../contract/command.ts';
import { commandArgv, substitute, substitutePattern } from '../../model/placeholders.ts';
import { describeFlow, flowEntries } from './snat-flow.ts';

export interface CheckResult {
  id: string;
  on: string;
  argv: string[];
  expected: string;
  observed: string;
  matched: boolean;
  /** Matching output lines, so the report shows the evidence itself. */
  evidence: string[];
  /** The check could not be read at all (its command failed, its counter matched no line): no evidence either way. */
  unreadable?: true;
  /** The number read: a counter's change or the count of matching lines. */
  value?: number;
  /** Reported, not asserted (`report: true`): it fails only when it cannot be read. */
  reported?: true;
}

type Range = NonNullable<NonNullable<CheckSpec['expect']>['delta']>;

export function inRange(value: number, range: Range): boolean {
  if (typeof range === 'number') return value === range;
  return (range.min === undefined || value >= range.min) && (range.max === undefined || value <= range.max);
}

export function describeRange(range: Range): string {
  if (typeof range === 'number') return `= ${range}`;
  if (range.min !== undefined && range.max !== undefined) return `${range.min}..${range.max}`;
  return range.min !== undefined ? `>= ${range.min}` : range.max !== undefined ? `<= ${range.max}` : 'of any value';
}

/**
 * The first capture group of `pattern` on any line, as a number; undefined when no line matches (the rule
 * is absent, or the pattern is wrong: either way the counter cannot be read). With `sum`, the groups of
 * every matching line added up (one line per CPU, say).
 */
export function readCounter(output: string, pattern: string, sum = false): { value: number; line: string } | undefined {
  const re = new RegExp(pattern);
  let total = 0;
  const lines: string[] = [];
  for (const line of output.split('\n')) {
    const m = re.exec(line);
    if (m?.[1] === undefined) continue;
    if (!sum) return { value: Number(m[1]), line: line.trim() };
    total += Number(m[1]);
    lines.push(line.trim());
  }
  return lines.length > 0 ? { value: total, line: lines.join(' | ') } : undefined;
}

/**
 * The printable strings of a program's output, as `strings` finds them: binary output (a pcap on
 * stdout, say) is split at every non-printable character; text lines come through whole.
 */
export function printableStrings(lines: readonly string[], minLength = 4): string[] {
  return lines
    .flatMap((l) => l.split(/[^\x20-\x7e\t]+/))
    .map((s) => s.trim())
    .filter((s) => s.length >= minLength);
}

/** A check's command output, or why there is none (it failed: a check cannot hold on a failed command). */
type Output = { argv: string[]; text: string; failure?: string };

/** An `snat` check's reading: the flow's reply entries in the node's table, or why it cannot be read. */
type SnatReading = { argv: string[]; entries: { key: string; line: string }[] } | { argv: string[]; failure: string };

const failureOf = (r: { exitCode: number | undefined; timedOut: boolean; stderr: string; stdout: string }) =>
  r.timedOut
    ? 'timed out'
    : r.exitCode !== 0
      ? `exit ${r.exitCode ?? 'signal'}${(r.stderr || r.stdout).trim() ? `: ${(r.stderr || r.stdout).trim().split('\n').slice(-2).join(' / ')}` : ''}`
      : undefined;

/** A counter check on a node that reads netfilter rules, whose counters a kube-proxy sync starts again from zero. */
const readsRules = (c: CheckSpec) =>
  c.counter !== undefined &&
  c.on.startsWith('node/') &&
  /\b(iptables|ip6tables|nft)(-save|-legacy|-nft)?\b/.test(String(c.cmd));

/** A node's kube-proxy sync counts at the two reads, where it says. */
type Syncs = Map<string, number | undefined>;

export class PhaseChecks {
  private before = new Map<string, { value: number; line?: string } | { failure: string }>();
  private syncsBefore: Syncs = new Map();
  private snatBefore = new Map<string, SnatReading>();
  private running = new Map<string, { argv: string[]; process: Spawned }>();

  constructor(
    private readonly checks: readonly CheckSpec[],
    private readonly cluster: StartedCluster,
    private readonly resolve: (ref: string) => string,
  ) {}

  /**
   * The outputs of `checks` at one moment: their commands run side by side, and checks naming the same
   * command on the same machine share one run of it (a table read once, not once per check).
   */
  private async outputs(checks: readonly CheckSpec[]): Promise<Map<CheckSpec, Output>> {
    const runs = new Map<string, Promise<Output>>();
    const byCheck = checks.map((check) => {
      const argv = substitute(commandArgv(check.cmd!), this.resolve);
      const key = JSON.stringify([check.on, argv]);
      if (!runs.has(key)) {
        const run = async () => this.cluster.target(check.on).exec(argv, { timeoutMs: 10_000, reject: false });
        runs.set(
          key,
          run().then((r) => ({ argv, text: r.stdout, failure: failureOf(r) })),
        );
      }
      return [check, runs.get(key)!] as const;
    });
    await Promise.allSettled(runs.values()); // none left running if one fails
    return new Map(await Promise.all(byCheck.map(async ([check, out]) => [check, await out] as const)));
  }

  /** The flow's entries in the node's SNAT table, read the way its provider reads it. */
  private async readSnat(check: CheckSpec): Promise<SnatReading> {
    let argv: string[] = [];
    try {
      const table = this.cluster.snatTable?.(check.on.slice('node/'.length));
      if (!table) return { argv, failure: "this cluster cannot read a node's SNAT table" };
      argv = table.argv;
      const r = await table.target.exec(argv, { timeoutMs: 10_000, reject: false });
      const failure = failureOf(r);
      if (failure) return { argv, failure: `command failed (${failure})` };
      return { argv, entries: flowEntries(table.entries(r.stdout), check.snat!, this.resolve) };
    } catch (e) {
      return { argv, failure: (e as Error).message };
    }
  }

  private readSnats(checks: readonly CheckSpec[]): Promise<[CheckSpec, SnatReading][]> {
    return Promise.all(
      checks.filter((c) => c.snat).map(async (c) => [c, await this.readSnat(c)] as [CheckSpec, SnatReading]),
    );
  }

  /** An `snat` check: the entries of its flow that were not in the table before the probes. */
  private snatResult(
    check: CheckSpec,
    after: SnatReading,
    base: Omit<CheckResult, 'argv' | 'expected' | 'observed' | 'matched' | 'evidence'>,
  ): CheckResult {
    const range = check.expect?.delta;
    const expected = `${describeFlow(check.snat!)} entries added ${range === undefined ? 'reported, not asserted' : describeRange(range)}`;
    const before = this.snatBefore.get(check.id) ?? { argv: after.argv, failure: 'not read before the probes' };
    if ('failure' in before || 'failure' in after) {
      const why =
        'failure' in before
          ? `before the probes: ${before.failure}`
          : `after the probes: ${(after as { failure: string }).failure}`;
      return {
        ...base,
        argv: after.argv,
        expected,
        observed: `cannot be read ${why}`,
        matched: false,
        evidence: [],
        unreadable: true,
      };
    }
    const known = new Set(before.entries.map((e) => e.key));
    const added = after.entries.filter((e) => !known.has(e.key));
    return {
      ...base,
      argv: after.argv,
      expected,
      observed: `${added.length} added (${before.entries.length} -> ${after.entries.length} entries of the flow)`,
      matched: range === undefined || inRange(added.length, range),
      value: added.length,
      evidence: added.map((e) => e.line).slice(0, 20),
    };
  }

  /** A check's pattern with its placeholders resolved ({ns/default} is another name on a shared cluster). */
  private pattern(pattern: string): string {
    return substitutePattern(pattern, this.resolve);
  }

  /** A counter's value, or why it cannot be read. */
  private counter(check: CheckSpec, out: Output): { value: number; line?: string } | { failure: string } {
    if (out.failure) return { failure: `command failed (${out.failure})` };
    const pattern = this.pattern(check.counter!);
    const read = readCounter(out.text, pattern, check.sum);
    if (read) return read;
    return check.absentIsZero ? { value: 0 } : { failure: `no line matched /${pattern}/` };
  }

  /**
   * The kube-proxy sync counts of the nodes whose counters the checks read, where the cluster says: read before
   * the first counter read and after the last one, they tell whether a rewrite may have zeroed a counter between.
   */
  private async readSyncs(settled: boolean): Promise<Syncs> {
    const syncs = this.cluster.kubeProxySyncs?.bind(this.cluster);
    if (!syncs) return new Map();
    const nodes = new Set(this.checks.filter(readsRules).map((c) => c.on.slice('node/'.length)));
    return new Map(
      await Promise.all([...nodes].map(async (n) => [n, await syncs(n, settled).catch(() => undefined)] as const)),
    );
  }

  /**
   * Reads every counter and starts every background command, in the checks' order; call right before
   * the probes. Counters between two background commands are read together.
   */
  async start(): Promise<void> {
    // no sync pending when the counters are first read: one a step's change queued would otherwise come between
    this.syncsBefore = await this.readSyncs(true);
    let counters: CheckSpec[] = [];
    const readCounters = async () => {
      for (const [check, out] of await this.outputs(counters)) this.before.set(check.id, this.counter(check, out));
      counters = [];
    };
    try {
      for (const check of this.checks) {
        if (check.background) {
          await readCounters();
          const argv = substitute(commandArgv(check.cmd!), this.resolve);
          const process = this.cluster.target(check.on).spawn(argv);
          this.running.set(check.id, { argv, process });
          if (check.ready) await process.waitFor(new RegExp(this.pattern(check.ready)), 3000);
        } else if (check.counter) counters.push(check);
      }
      await readCounters();
      for (const [check, reading] of await this.readSnats(this.checks)) this.snatBefore.set(check.id, reading);
    } catch (e) {
      await this.stopAll();
      throw e;
    }
  }

  /** How kube-proxy rewrote `on`'s rules between the counter reads, or undefined where it did not (or cannot say). */
  private rewrite(check: CheckSpec, syncsAfter: Syncs): string | undefined {
    if (!readsRules(check)) return undefined;
    const node = check.on.slice('node/'.length);
    const [before, after] = [this.syncsBefore.get(node), syncsAfter.get(node)];
    if (before === undefined || after === undefined || before === after) return undefined;
    return `kube-proxy rewrote ${node}'s rules between the reads (its sync count ${before} -> ${after})`;
  }

  private async stopAll(): Promise<(number | undefined)[]> {
    const stopped = await Promise.allSettled([...this.running.values()].map((r) => r.process.stop('SIGINT')));
    return stopped.map((s) => (s.status === 'fulfilled' ? s.value.exitCode : undefined));
  }

  async finish(): Promise<CheckResult[]> {
    const results: CheckResult[] = [];
    const exits = new Map([...this.running.keys()].map((id, i) => [id, i]));
    const codes = await this.stopAll();
    const read = await this.outputs(this.checks.filter((c) => !this.running.has(c.id) && !c.snat));
    const snats = new Map(await this.readSnats(this.checks));
    const syncsAfter = await this.readSyncs(false);
    for (const check of this.checks) {
      if (check.snat) {
        const base = { id: check.id, on: check.on, ...(check.report ? { reported: true as const } : {}) };
        results.push(this.snatResult(check, snats.get(check)!, base));
        continue;
      }
      const background = this.running.get(check.id);
      const code = background ? codes[exits.get(check.id)!] : undefined;
      const out: Output = background
        ? {
            argv: background.argv,
            text: printableStrings(background.process.lines()).join('\n'),
            failure:
              code === 0 ? undefined : `exit ${code ?? 'signal'}: ${background.process.lines().slice(-2).join(' / ')}`,
          }
        : read.get(check)!;
      const base = { id: check.id, on: check.on, argv: out.argv, ...(check.report ? { reported: true as const } : {}) };
      // a reported number holds whatever it is; only a bound can fail it
      const holds = (value: number, range: Range | undefined) => range === undefined || inRange(value, range);
      if (check.counter) {
        const range = check.expect?.delta;
        const before = this.before.get(check.id) ?? { failure: 'not read before the probes' };
        const after = this.counter(check, out);
        const expected = range === undefined ? 'delta reported, not asserted' : `delta ${describeRange(range)}`;
        if ('failure' in before || 'failure' in after) {
          const why =
            'failure' in before
              ? `before the probes: ${before.failure}`
              : `after the probes: ${(after as { failure: string }).failure}`;
          results.push({
            ...base,
            expected,
            observed: `cannot be read ${why}`,
            matched: false,
            evidence: [],
            unreadable: true,
          });
          continue;
        }
        const delta = after.value - before.value;
        const read = `${before.value} -> ${after.value}${after.line ? '' : ', no line: absent reads 0'}`;
        const rewrite = this.rewrite(check, syncsAfter);
        // a rewrite can only lower what is read: a count that reached its minimum, with no maximum, still holds,
        // and a reported one is shown with the rewrite named
        const rewriteMayDecide =
          range !== undefined && (typeof range === 'number' || range.max !== undefined || !holds(delta, range));
        if (rewrite && rewriteMayDecide) {
          results.push({
            ...base,
            expected,
            observed: `not measured: ${rewrite}, which starts their counters again from zero (read ${read})`,
            matched: false,
            evidence: after.line ? [after.line] : [],
            unreadable: true,
          });
          continue;
        }
        results.push({
          ...base,
          expected,
          observed: `delta ${delta} (${read}${rewrite ? `; ${rewrite}` : ''})`,
          matched: holds(delta, range),
          value: delta,
          evidence: after.line ? [after.line] : [],
        });
      } else {
        const range = check.expect?.count;
        const matches = this.pattern(check.matches!);
        const expected = `lines matching /${matches}/ ${range === undefined ? 'reported, not asserted' : describeRange(range)}`;
        if (out.failure) {
          results.push({
            ...base,
            expected,
            observed: `command failed (${out.failure})`,
            matched: false,
            evidence: [],
            unreadable: true,
          });
          continue;
        }
        const re = new RegExp(matches);
        const lines = out.text.split('\n').filter((l) => re.test(l));
        results.push({
          ...base,
          expected,
          observed: `${lines.length} matching line(s)`,
          matched: holds(lines.length, range),
          value: lines.length,
          evidence: lines.map((l) => l.trim()).slice(0, 20),
        });
      }
    }
    return results;
  }
}
