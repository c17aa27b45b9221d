// Phase checks: evidence asserted directly, not only through a probe's outcome. A counter is read
// right before the phase's probes and right after them (a rule's packet count, say); an output
// check counts matching lines after the probes (two maps with the same name, say).
import type { StartedCluster } from '../../clusters/provider.ts';
import type { CheckSpec } from '../model/scenario-schema.ts';
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

/** The first capture group of `pattern` on any line, as a number; 0 when no line matches (e.g. the rule is absent). */
export function readCounter(output: string, pattern: string): { value: number; line?: string } {
  const re = new RegExp(pattern);
  for (const line of output.split('\n')) {
    const m = re.exec(line);
    if (m?.[1] !== undefined) return { value: Number(m[1]), line: line.trim() };
  }
  return { value: 0 };
}

export class PhaseChecks {
  private before = new Map<string, number>();

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

  /** Reads every counter; call right before the probes. */
  async start(): Promise<void> {
    for (const check of this.checks) {
      if (check.counter) this.before.set(check.id, readCounter((await this.output(check)).text, check.counter).value);
    }
  }

  async finish(): Promise<CheckResult[]> {
    const results: CheckResult[] = [];
    for (const check of this.checks) {
      const { argv, text } = await this.output(check);
      if (check.counter) {
        const after = readCounter(text, check.counter);
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
