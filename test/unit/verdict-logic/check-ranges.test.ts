// src/observe/expect/run-checks.ts, the pure parts: ranges, counters read from output, printable strings.
import { describe, expect, it } from 'vitest';
import { describeRange, inRange, printableStrings, readCounter } from '../../../src/observe/expect/run-checks.ts';

describe('inRange', () => {
  it('a number is an exact value: 0 holds only for 0', () => {
    expect(inRange(0, 0)).toBe(true);
    expect(inRange(1, 0)).toBe(false);
    expect(inRange(-1, 0)).toBe(false);
    expect(inRange(3, 3)).toBe(true);
  });

  it('a range holds at both ends and nowhere outside', () => {
    expect(inRange(1, { min: 1, max: 3 })).toBe(true);
    expect(inRange(3, { min: 1, max: 3 })).toBe(true);
    expect(inRange(0, { min: 1, max: 3 })).toBe(false);
    expect(inRange(4, { min: 1, max: 3 })).toBe(false);
  });

  it('an open range: a minimum alone, a maximum alone', () => {
    expect(inRange(1, { min: 1 })).toBe(true);
    expect(inRange(1000, { min: 1 })).toBe(true);
    expect(inRange(0, { min: 1 })).toBe(false);
    expect(inRange(2, { max: 2 })).toBe(true);
    expect(inRange(-5, { max: 2 })).toBe(true);
    expect(inRange(3, { max: 2 })).toBe(false);
  });
});

describe('describeRange', () => {
  it('reads each form', () => {
    expect(describeRange(0)).toBe('= 0');
    expect(describeRange({ min: 1, max: 3 })).toBe('1..3');
    expect(describeRange({ min: 0, max: 0 })).toBe('0..0');
    expect(describeRange({ min: 1 })).toBe('>= 1');
    expect(describeRange({ max: 2 })).toBe('<= 2');
    expect(describeRange({})).toBe('of any value'); // validation keeps it out of scenarios
  });
});

describe('readCounter', () => {
  const iptables = [
    'Chain KUBE-FORWARD (policy ACCEPT 0 packets, 0 bytes)',
    '    pkts      bytes target',
    '      7      420 DROP       all  --  *  *  0.0.0.0/0  0.0.0.0/0  ctstate INVALID',
    '     12      720 ACCEPT     all',
  ].join('\n');

  it('the first group of the first matching line, and that line trimmed', () => {
    expect(readCounter(iptables, '^\\s*(\\d+)\\s+\\d+\\s+(?:DROP|ACCEPT)')).toEqual({
      value: 7,
      line: '7      420 DROP       all  --  *  *  0.0.0.0/0  0.0.0.0/0  ctstate INVALID',
    });
  });

  it('no matching line, or a match without the group, reads nothing', () => {
    expect(readCounter(iptables, 'REJECT (\\d+)')).toBeUndefined();
    expect(readCounter(iptables, '(\\d+)?\\s*Chain KUBE')).toBeUndefined();
    expect(readCounter('', '(\\d+)', true)).toBeUndefined();
  });

  it('a line whose match lacks the group is passed over for the next one', () => {
    expect(readCounter('drops\ndrops 5', 'drops(?: (\\d+))?')).toEqual({ value: 5, line: 'drops 5' });
  });

  it('with sum, the groups of every matching line are added up, and every line shown', () => {
    const perCpu = ' cpu=0 found=0 invalid=3 \ncpu=1 found=0 invalid=4\nnothing here';
    expect(readCounter(perCpu, 'invalid=(\\d+)', true)).toEqual({
      value: 7,
      line: 'cpu=0 found=0 invalid=3 | cpu=1 found=0 invalid=4',
    });
    expect(readCounter(perCpu, 'invalid=(\\d+)')).toEqual({ value: 3, line: 'cpu=0 found=0 invalid=3' });
  });
});

describe('printableStrings', () => {
  it('splits binary output at non-printable bytes and keeps runs of 4 or more, trimmed', () => {
    expect(printableStrings(['\x00\x01GET / HTTP/1.1\x00abc\x02host: web \x7f1234'])).toEqual([
      'GET / HTTP/1.1',
      'host: web',
      '1234',
    ]);
  });

  it('text lines (tabs included) come through whole', () => {
    expect(printableStrings(['a line\twith a tab', '  padded  '])).toEqual(['a line\twith a tab', 'padded']);
  });

  it('a shorter minimum length keeps shorter strings; length is counted after trimming', () => {
    expect(printableStrings(['ab\x00abc\x00 ab '], 3)).toEqual(['abc']);
    expect(printableStrings(['ab\x00abc'], 2)).toEqual(['ab', 'abc']);
  });
});
