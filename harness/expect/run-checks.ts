// Phase checks: evidence asserted directly, not only through a probe's outcome. A counter is read
// right before the phase's probes and right after them (a rule's packet count, say); an output
// check counts matching lines after the probes (two maps with the same name, say).
import type { StartedCluster } from '../../clusters/provider.ts';
import type { CheckSpec } from '../model/scenario-schema.ts';
import type { Spawned } from '../../clusters/command.ts';
import { commandArgv, substitute } from '../engine/expand-step.ts';

export interface CheckResult {
  id: string;
  on: string;
  argv: string[];
  expected: string;
  observed: string;
  matched: boolean;
  /** Matching output lines, so the report shows the evidence itself. */
  evidence: string[];
}

type Range = NonNullable<CheckSpec['expect']['delta']>;

export function inRange(value: number, range: Range): boolean {
  if (typeof range === 'number') return value === range;
  return (range.min === undefined || value >= range.min) && (range.max === undefined || value <= range.max);
}

export function describeRange(range: Range): string {
  if (typeof range === 'number') return `= ${range}`;
  if (range.min !== undefined && range.max !== undefined) return `${range.min}..${range.max}`;
  return range.min !== undefined ? `>= ${range.min}` : `<= ${range.max}`;
}

/**
 * The first capture group of `pattern` on any line, as a number; 0 when no line matches (e.g. the rule is absent).
 * With `sum`, the groups of every matching line added up (one line per CPU, say).
 */
export function readCounter(output: string, pattern: string, sum = false): { value: number; line?: string } {
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
  return lines.length > 0 ? { value: total, line: lines.join(' | ') } : { value: 0 };
}

/**
 * The printable strings of a program's output, as `strings` finds them: binary output (a pcap on
 * stdout, say) is split at every non-printable character; text lines come through whole.
 */
export function printableStrings(lines: readonly string[], minLength = 4): string[] {
  return lines.flatMap((l) => l.split(/[^\x20-\x7e\t]+/)).map((s) => s.trim()).filter((s) => s.length >= minLength);
}

export class PhaseChecks {
  private before = new Map<string, number>();
  private running = new Map<string, { argv: string[]; process: Spawned }>();

  constructor(
    private readonly checks: readonly CheckSpec[],
    private readonly cluster: StartedCluster,
    private readonly resolve: (ref: string) => string,
  ) {}

  private async output(check: CheckSpec): Promise<{ argv: string[]; text: string }> {
    const argv = substitute(commandArgv(check.cmd), this.resolve);
    const r = await this.cluster.target(check.on).exec(argv, { timeoutMs: 10_000 });
    return { argv, text: r.stdout };
  }

  /** Reads every counter and starts every background command; call right before the probes. */
  async start(): Promise<void> {
    try {
      for (const check of this.checks) {
        if (check.background) {
          const argv = substitute(commandArgv(check.cmd), this.resolve);
          const process = this.cluster.target(check.on).spawn(argv);
          this.running.set(check.id, { argv, process });
          if (check.ready) await process.waitFor(new RegExp(check.ready), 3000);
        } else if (check.counter) this.before.set(check.id, readCounter((await this.output(check)).text, check.counter, check.sum).value);
      }
    } catch (e) {
      await this.stopAll();
      throw e;
    }
  }

  private async stopAll(): Promise<void> {
    await Promise.allSettled([...this.running.values()].map((r) => r.process.stop('SIGINT')));
  }

  async finish(): Promise<CheckResult[]> {
    const results: CheckResult[] = [];
    await this.stopAll();
    for (const check of this.checks) {
      const background = this.running.get(check.id);
      const { argv, text } = background ? { argv: background.argv, text: printableStrings(background.process.lines()).join('\n') } : await this.output(check);
      if (check.counter) {
        const after = readCounter(text, check.counter, check.sum);
        const before = this.before.get(check.id) ?? 0;
        const delta = after.value - before;
        const range = check.expect.delta!;
        results.push({
          id: check.id,
          on: check.on,
          argv,
          expected: `delta ${describeRange(range)}`,
          observed: `delta ${delta} (${before} -> ${after.value}${after.line ? '' : ', no line matched'})`,
          matched: inRange(delta, range),
          evidence: after.line ? [after.line] : [],
        });
      } else {
        const re = new RegExp(check.matches!);
        const lines = text.split('\n').filter((l) => re.test(l));
        const range = check.expect.count!;
        results.push({
          id: check.id,
          on: check.on,
          argv,
          expected: `lines matching /${check.matches}/ ${describeRange(range)}`,
          observed: `${lines.length} matching line(s)`,
          matched: inRange(lines.length, range),
          evidence: lines.map((l) => l.trim()).slice(0, 20),
        });
      }
    }
    return results;
  }
}
