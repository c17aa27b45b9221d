// src/engine/gate/run-gate.ts, change: the gate's verdict for one scenario from both profiles' assessments.
import { expect, it } from 'vitest';
import { change } from '../../../src/engine/gate/run-gate.ts';
import type { Susceptibility } from '../../../src/engine/gate/susceptibility.ts';

const SIDES: Susceptibility[] = ['susceptible', 'immune', 'broken', 'not-applicable', 'unjudged'];

// rows: baseline; columns: candidate, in SIDES' order
const TABLE: Record<Susceptibility, string[]> = {
  susceptible: ['unchanged', 'improvement', 'regression', 'unchanged', 'unjudged'],
  immune: ['regression', 'unchanged', 'regression', 'unchanged', 'unjudged'],
  broken: ['unjudged', 'improvement', 'unjudged', 'unjudged', 'unjudged'],
  'not-applicable': ['unchanged', 'unchanged', 'regression', 'unchanged', 'unjudged'],
  unjudged: ['unjudged', 'unjudged', 'unjudged', 'unjudged', 'unjudged'],
};

it.each(SIDES.flatMap((b) => SIDES.map((c, i) => [b, c, TABLE[b][i]] as const)))(
  '%s -> %s is %s',
  (baseline, candidate, expected) => {
    expect(change(baseline, candidate)).toBe(expected);
  },
);
