// The spinner's live lines: one per running scenario with the phase of each of its labs and its time, cut to
// the terminal's width, never taller than the terminal.
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { colorsFor } from '../../src/report/colors.ts';
import { RunningScenarios } from '../../src/report/running-scenarios.ts';

const pc = colorsFor({ isTTY: false });

describe('the running scenarios', () => {
  it('names each running scenario with its phase and time, under the count done', () => {
    let now = 0;
    const running = new RunningScenarios(3, () => now);
    running.start('conntrack-invalid-reset');
    running.start('e2e-hairpin-to-self');
    now = 2000;
    running.phase('conntrack-invalid-reset', 'be-liberal', 'faulted');
    running.phase('conntrack-invalid-reset', 'kube-proxy-1-15-invalid-drop', 'fixed');
    running.start('service-no-endpoints-reject');
    running.phase('service-no-endpoints-reject', 'x', 'baseline');
    running.end('e2e-hairpin-to-self');
    now = 3400;
    expect(running.text(pc, 120)).toBe(
      [
        '1/3 done',
        '  conntrack-invalid-reset  be-liberal: faulted, kube-proxy-1-15-invalid-drop: fixed · 3 s',
        '  service-no-endpoints-reject  baseline · 1 s',
      ].join('\n'),
    );
  });

  it('says provisioning before a lab is up, and counts a scenario done once', () => {
    const running = new RunningScenarios(2, () => 0);
    running.start('a');
    expect(running.text(pc, 80)).toBe('0/2 done\n  a  provisioning · 0 s');
    running.end('a');
    running.end('a');
    expect(running.text(pc, 80)).toBe('1/2 done');
  });

  it('cuts a line at a word to the width, and keeps the block shorter than the terminal', () => {
    const running = new RunningScenarios(9, () => 0);
    for (const id of ['alpha', 'bravo', 'charlie', 'delta', 'echo']) running.start(id);
    running.phase('alpha', 'a-very-long-fix-variant-name', 'faulted');
    running.phase('alpha', 'another-long-fix-variant-name', 'fixed');
    const lines = stripVTControlCharacters(running.text(pc, 40, 5)).split('\n');
    expect(lines).toEqual([
      '0/9 done',
      '  alpha  a-very-long-fix-variant-name:…',
      '  bravo  provisioning · 0 s',
      '  … and 3 more',
    ]);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(40);
  });
});
