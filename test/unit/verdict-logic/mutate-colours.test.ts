// src/engine/mutate/mutate-command.ts on a colour terminal: each mutant's status in its own colour
// (green killed, red survived, yellow not judged), a failed original in red.
import { expect, it, vi } from 'vitest';

// picocolors reads FORCE_COLOR when it is first loaded: set it before mutate-command.ts loads it
const before = vi.hoisted(() => {
  const was = process.env.FORCE_COLOR;
  process.env.FORCE_COLOR = '1';
  return was;
});
const { mutantLine, mutateTable } = await import('../../../src/engine/mutate/mutate-command.ts');
if (before === undefined) delete process.env.FORCE_COLOR;
else process.env.FORCE_COLOR = before;

const m = (status: 'killed' | 'survived' | 'not-judged') => ({
  scenario: 's',
  mutation: 'fault-removed',
  status,
  killed: status === 'killed',
  reason: 'r',
});
const GREEN = '\x1b[32m';
const RED = '\x1b[31m';
const YELLOW = '\x1b[33m';
const OFF = '\x1b[39m';

it('a mutant line is coloured by its status', () => {
  expect(mutantLine(m('killed')).startsWith(`${GREEN}killed  ${OFF} s `)).toBe(true);
  expect(mutantLine(m('survived')).startsWith(`${RED}SURVIVED${OFF} s `)).toBe(true);
  expect(mutantLine(m('not-judged')).startsWith(`${YELLOW}UNJUDGED${OFF} s `)).toBe(true);
});

it('so is its table row; a failed original is red', () => {
  const lines = mutateTable({
    mutants: [m('killed'), m('survived'), m('not-judged')],
    originalFailures: [{ scenario: 'o', reason: 'x' }],
    retries: [],
    killRate: 0.5,
    durationMs: 0,
  }).split('\n');
  expect(lines.slice(1, 4).map((l) => l.slice(2, 7))).toEqual([GREEN, RED, YELLOW]);
  expect(lines[4]).toBe(`${RED}original FAILED o: x (its mutants are not judged)${OFF}`);
});
