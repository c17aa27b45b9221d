// Console lines on a narrow terminal: wrapped at word boundaries, continuations indented under their line.
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { fitWidth } from '../../src/report/fit-width.ts';

describe('fitWidth', () => {
  it('wraps at 60 columns between words, indents continuations, and keeps every word whole', () => {
    const line =
      '  faulted download (every fix variant): expected reset, observed ok: client -> 10.96.0.30:80 = ok (HTTP 200)';
    const fitted = fitWidth(line, 60).split('\n');
    expect(fitted.every((l) => l.length <= 60)).toBe(true);
    expect(fitted.slice(1).every((l) => l.startsWith('      ') && !l.startsWith('       '))).toBe(true);
    expect(fitted.map((l) => l.trim()).join(' ')).toBe(line.trim());
  });

  it('leaves lines alone where the width is unknown or too narrow to help, and keeps colour codes whole', () => {
    const line = 'a '.repeat(80);
    expect(fitWidth(line, undefined)).toBe(line);
    expect(fitWidth(line, 0)).toBe(line);
    const red = `\x1b[31m${'word '.repeat(30)}\x1b[39m`;
    expect(stripVTControlCharacters(fitWidth(red, 40))).not.toMatch(/wo\n|\nrd/);
  });
});
