// What a schema cannot see about whether a scenario can fail: bounds that hold for every possible value,
// patterns that match every line, a fault that asserts nothing the healthy cluster does not, a fix that
// asserts nothing the broken one does not. Each is refused as input: a verdict must be falsifiable.
import type { ReferenceIssue } from './scenario-references.ts';
import type { CheckSpec, ExpectedSpec, Scenario } from './scenario-schema.ts';

type Path = (string | number)[];
type Bounds = { min?: number; max?: number };

export function checkFalsifiable(s: Scenario): ReferenceIssue[] {
  const issues: ReferenceIssue[] = [];
  const runs = new Map(s.probes.map((p) => [p.id, p.repeat]));
  const phases: [Path, Scenario['baseline']['expect'], CheckSpec[]][] = [
    [['baseline'], s.baseline.expect, s.baseline.checks],
    [['fault'], s.fault.expect, s.fault.checks],
    ...s.fixes.map((f, i): [Path, Scenario['baseline']['expect'], CheckSpec[]] => [['fixes', i], f.expect, f.checks]),
  ];
  for (const [base, expect, checks] of phases) {
    for (const [id, expected] of Object.entries(expect)) {
      const n = runs.get(id);
      if (n !== undefined && typeof expected === 'object')
        issues.push(...repeatedBounds(expected, n, [...base, 'expect', id]));
    }
    for (const [i, c] of checks.entries()) issues.push(...checkBounds(c, [...base, 'checks', i]));
  }
  issues.push(...faultShowsSymptom(s), ...fixesRemoveIt(s), ...controlsThatMove(s), ...qualifiersTheFaultOmits(s));
  return issues;
}

/** What a probe's expectation can say beyond its outcome: who answered, whom the server saw, where replies came from. */
const QUALIFIERS = ['servedBy', 'clientAddress', 'source', 'sentTo', 'answer'] as const;

/**
 * A fix that asserts a qualifier of a probe whose faulted expectation says nothing the fix's does not (the same
 * outcome, no qualifier of its own): what the fix claims to change was never asserted broken (the hidden client address
 * expected only as `ok`), so a fault that left it as it is would pass.
 */
function qualifiersTheFaultOmits(s: Scenario): ReferenceIssue[] {
  if (s.purpose !== 'reproduce') return [];
  const spec = (e: ExpectedSpec | undefined) => (typeof e === 'string' ? { outcome: e } : e);
  return s.fixes.flatMap((fix, i) =>
    Object.entries(fix.expect).flatMap(([id, expected]) => {
      const fixed = spec(expected) as Record<string, unknown> | undefined;
      const faulted = spec(s.fault.expect[id]) as Record<string, unknown> | undefined;
      // the faulted expectation says something the fix does not (another outcome, sameBackend, a count): asserted
      if (!fixed || !faulted || !Object.entries(faulted).every(([k, v]) => canonical(fixed[k]) === canonical(v)))
        return [];
      return QUALIFIERS.filter((q) => fixed[q] !== undefined && faulted[q] === undefined).map((q) => ({
        path: ['fixes', i, 'expect', id, q],
        message: `fix ${fix.name} asserts ${id}'s ${q} (${canonical(fixed[q])}), which the faulted phase does not assert although it expects the same outcome: the symptom it fixes is never asserted`,
        expected: `fault.expect.${id}.${q}: what it is while the fault holds`,
      }));
    }),
  );
}

/**
 * A control holds whether the fault ran or not, so it cannot read the same thing as a baseline check under
 * another bound: that bound moves with the fault, which makes it the symptom (mutate judges the controls
 * no baseline check reads).
 */
function controlsThatMove(s: Scenario): ReferenceIssue[] {
  const reads = (c: CheckSpec) => canonical([c.on, c.cmd ?? c.snat, c.matches ?? c.counter]);
  return s.fault.checks.flatMap((c, i) => {
    if (!c.control) return [];
    const before = s.baseline.checks.find((b) => reads(b) === reads(c) && !sameCheck(b, c));
    if (!before) return [];
    return [
      {
        path: ['fault', 'checks', i, 'control'],
        message: `a control holds with or without the fault, but the baseline reads the same with another bound (${before.id}: ${canonical(before.expect ?? 'reported')}, here ${canonical(c.expect ?? 'reported')}): it moves with the fault, so it is the symptom`,
        expected: 'no `control: true`: assert it',
      },
    ];
  });
}

/** count, rate and otherwise of a repeated probe's expectation (n runs). */
export function repeatedBounds(e: Exclude<ExpectedSpec, string>, n: number, path: Path): ReferenceIssue[] {
  const issues: ReferenceIssue[] = [];
  if (e.count !== undefined) {
    const b: Bounds = typeof e.count === 'number' ? { min: e.count, max: e.count } : e.count;
    const lo = b.min ?? 0;
    const hi = b.max ?? n;
    if (lo > n || lo > hi) {
      issues.push({
        path: [...path, 'count'],
        message: `can never hold: ${n} runs`,
        received: describe(b),
        expected: `a count within 0..${n}`,
      });
    } else if (lo <= 0 && hi >= n) {
      issues.push({
        path: [...path, 'count'],
        message: `holds for every result of ${n} runs: it cannot fail`,
        received: describe(b),
        expected: `min >= 1 or max < ${n}`,
      });
    }
  }
  if (e.rate !== undefined) {
    const lo = e.rate.min ?? 0;
    const hi = e.rate.max ?? 1;
    if (lo > hi)
      issues.push({
        path: [...path, 'rate'],
        message: 'can never hold: min is above max',
        received: describe(e.rate),
        expected: 'min <= max',
      });
    else if (lo <= 0 && hi >= 1)
      issues.push({
        path: [...path, 'rate'],
        message: 'covers 0..1: it holds for every result and cannot fail',
        received: describe(e.rate),
        expected: 'min > 0 or max < 1',
      });
  }
  if (e.otherwise !== undefined) {
    const qualified =
      e.servedBy !== undefined ||
      e.clientAddress !== undefined ||
      e.source !== undefined ||
      e.connected !== undefined ||
      e.sentTo !== undefined ||
      e.answer !== undefined;
    if (e.count === undefined && e.rate === undefined) {
      issues.push({
        path: [...path, 'otherwise'],
        message: 'never applies: without count or rate every run must match the expectation',
        received: e.otherwise,
        expected: 'count or rate beside it, or no otherwise',
      });
    } else if (e.otherwise === e.outcome && !qualified) {
      issues.push({
        path: [...path, 'otherwise'],
        message: `equals the outcome: every run must then be ${e.outcome}, and count or rate asserts nothing more`,
        received: e.otherwise,
        expected: `another outcome, or a run qualified beyond its outcome (servedBy, source, ...)`,
      });
    }
  }
  return issues;
}

/** A check's bound and patterns: a count of lines is never below 0, and a counter only rises. */
export function checkBounds(c: CheckSpec, path: Path): ReferenceIssue[] {
  const issues: ReferenceIssue[] = [];
  for (const field of ['matches', 'counter', 'ready'] as const) {
    const pattern = c[field];
    if (pattern === undefined) continue;
    let re: RegExp;
    try {
      re = new RegExp(pattern);
    } catch (e) {
      issues.push({
        path: [...path, field],
        message: `not a valid regular expression: ${(e as Error).message}`,
        received: pattern,
      });
      continue;
    }
    if (field !== 'ready' && re.test('')) {
      issues.push({
        path: [...path, field],
        message: 'matches the empty string, so it matches every line: it proves nothing',
        received: JSON.stringify(pattern),
        expected: 'a pattern that needs some text',
      });
    }
  }
  if (c.expect?.count !== undefined) {
    const b = bounds(c.expect.count);
    if ((b.max ?? Infinity) < 0 || (b.min ?? 0) > (b.max ?? Infinity))
      issues.push({
        path: [...path, 'expect', 'count'],
        message: 'can never hold: a count of lines is 0 or more',
        received: describe(b),
      });
    else if ((b.min ?? 0) <= 0 && b.max === undefined)
      issues.push(always([...path, 'expect', 'count'], b, 'a count of lines is never below 0', 'min >= 1, or a max'));
  }
  if (c.expect?.delta !== undefined) {
    const b = bounds(c.expect.delta);
    if ((b.min ?? -Infinity) > (b.max ?? Infinity))
      issues.push({
        path: [...path, 'expect', 'delta'],
        message: 'can never hold: min is above max',
        received: describe(b),
      });
    else if ((b.min ?? -Infinity) <= 0 && b.max === undefined)
      issues.push(always([...path, 'expect', 'delta'], b, 'a counter never falls', 'min >= 1, or a max'));
  }
  return issues;
}

function always(path: Path, b: Bounds, why: string, expected: string): ReferenceIssue {
  return {
    path,
    message: `holds for every value (${why}): it cannot fail; for a number that is only reported write \`report: true\` instead of \`expect\``,
    received: describe(b),
    expected,
  };
}

const bounds = (r: number | Bounds): Bounds => (typeof r === 'number' ? { min: r, max: r } : r);

function describe(b: Bounds): string {
  return JSON.stringify(b).replaceAll('"', '').replaceAll(':', ': ').replaceAll(',', ', ');
}

/** An expectation in one shape, so that `ok` and `{ outcome: ok }` compare equal. */
export function sameExpectation(a: ExpectedSpec | undefined, b: ExpectedSpec | undefined): boolean {
  return (
    a !== undefined &&
    b !== undefined &&
    canonical(typeof a === 'string' ? { outcome: a } : a) === canonical(typeof b === 'string' ? { outcome: b } : b)
  );
}

/** Two checks assert the same when everything but their id (and the control mark) is equal. */
export function sameCheck(a: CheckSpec, b: CheckSpec): boolean {
  const { id: _a, control: _ca, ...restA } = a;
  const { id: _b, control: _cb, ...restB } = b;
  return canonical(restA) === canonical(restB);
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => x.localeCompare(y)))
      : v,
  );
}

type Assertions = { expect: Scenario['baseline']['expect']; checks: readonly CheckSpec[] };

/** What `phase` asserts that `other` does not: probe ids whose expectation differs, and asserting (non-control) checks `other` lacks. */
export function assertedBeyond(phase: Assertions, other: Assertions): { probes: string[]; checks: string[] } {
  return {
    probes: Object.keys(phase.expect).filter((id) => !sameExpectation(phase.expect[id], other.expect[id])),
    // a control holds with or without the steps, and a reported number asserts nothing: neither shows a change
    checks: phase.checks
      .filter((c) => !c.report && !c.control && !other.checks.some((o) => !o.report && sameCheck(c, o)))
      .map((c) => c.id),
  };
}

function faultShowsSymptom(s: Scenario): ReferenceIssue[] {
  // a replay's captured state is its fault: its baseline asserts what the probes show there
  if (s.purpose === 'replay') return [];
  const beyond = assertedBeyond(s.fault, s.baseline);
  if (s.purpose === 'preserve') {
    if (beyond.checks.length > 0) return [];
    return [
      {
        path: ['fault', 'checks'],
        message:
          "a preserve scenario expects the baseline's outcomes after its fault, so only a check can prove the change happened: add one the baseline does not have (the endpoint gone, the pod restarted, ...)",
        expected: 'a check that differs from every baseline check',
      },
    ];
  }
  if (beyond.probes.length > 0 || beyond.checks.length > 0) return [];
  return [
    {
      path: ['fault', 'expect'],
      message:
        "the faulted phase asserts nothing the baseline does not (every expectation and check equals the baseline's): a fault that does nothing would pass. Expect the symptom, or declare `purpose: preserve` for a change traffic must survive",
      expected: 'an outcome or check that differs from the baseline',
    },
  ];
}

function fixesRemoveIt(s: Scenario): ReferenceIssue[] {
  // a replay's fix runs after its baseline, the captured incident
  const [before, phase] = s.purpose === 'replay' ? [s.baseline, 'baseline'] : [s.fault, 'faulted phase'];
  return s.fixes.flatMap((fix, i) => {
    const beyond = assertedBeyond(fix, before);
    if (beyond.probes.length > 0 || beyond.checks.length > 0) return [];
    return [
      {
        path: ['fixes', i, 'expect'],
        message: `fix ${fix.name} asserts nothing the ${phase} does not: a fix that does nothing would pass. Expect the symptom gone, or add a check that proves the fix took effect`,
        expected: `an outcome or check that differs from the ${phase}`,
      },
    ];
  });
}
