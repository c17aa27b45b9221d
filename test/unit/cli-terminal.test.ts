// What a person sees in a terminal: progress that never draws where it cannot (0 columns), the
// summary line per scenario, a culprit said once, aligned lists, a selection that cannot be empty,
// and examples in every command's --help.
import { EventEmitter } from 'node:events';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { PhaseResult, ProbeResult, RunResult, ScenarioResult } from '../../src/engine/run/results.ts';
import { buildCli } from '../../src/cli/build-cli.ts';
import { selectRunScenarios } from '../../src/cli/select-scenarios.ts';
import { listLines } from '../../src/cli/commands/list.ts';
import { consoleReporter, phaseCell, summary } from '../../src/report/console-reporter.ts';
import { colorsFor } from '../../src/report/colors.ts';
import { diagnosisLines } from '../../src/report/diagnosis-lines.ts';
import { canSpin, progress } from '../../src/report/progress.ts';

/** A terminal-like stream that records what is written. */
function fakeTerminal(columns: number | undefined) {
  const stream = Object.assign(new EventEmitter(), {
    isTTY: true,
    columns,
    rows: 24,
    written: '',
    write: (s: string) => ((stream.written += s), true),
    cursorTo: () => true,
    moveCursor: () => true,
    clearLine: () => true,
  });
  return stream;
}

const RULE = '-A KUBE-SERVICES -d 10.96.0.20/32 -p tcp -j REJECT';
const failing = (variant: string): PhaseResult => ({
  name: 'faulted',
  variant,
  steps: [],
  checks: [],
  durationMs: 0,
  status: 'failed',
  probes: [
    {
      id: 'clusterip',
      expected: 'timeout',
      observed: 'refused',
      matched: false,
      summary: 'refused',
      durationMs: 0,
      detail: {},
      diagnosis: {
        culprit: { kind: 'rule', node: 'node-a', where: 'filter/KUBE-SERVICES', text: RULE },
        packet: {} as never,
        reason: `node-a's rule \`${RULE}\` (filter/KUBE-SERVICES) rejected the SYN.`,
        path: [],
      },
    } as ProbeResult,
  ],
});
const phase = (name: PhaseResult['name'], variant: string, status: PhaseResult['status'] = 'passed'): PhaseResult => ({
  name,
  variant,
  steps: [],
  probes: [],
  checks: [],
  durationMs: 0,
  status,
});
const scenario = (phases: PhaseResult[], verdict: ScenarioResult['verdict'] = 'passed', id = 's'): ScenarioResult => ({
  id,
  title: 't',
  file: '',
  verdict,
  durationMs: 1000,
  phases,
  labs: [],
  log: [],
});

describe('progress', () => {
  it.each([
    [{ isTTY: true, columns: 80 }, {}, true],
    [{ isTTY: true, columns: 0 }, {}, false],
    [{ isTTY: true, columns: undefined }, {}, false],
    [{ isTTY: false, columns: 80 }, {}, false],
    [{ isTTY: true, columns: 80 }, { CI: 'true' }, false],
    [{ isTTY: true, columns: 80 }, { CI: '' }, false],
    [{ isTTY: true, columns: 80 }, { TERM: 'dumb' }, false],
  ])('%o with %o: spinner %s', (stream, env, expected) => {
    expect(canSpin(stream, env)).toBe(expected);
  });

  it('prints plain lines on a terminal of 0 columns, and drops the spinner when one is resized to 0', () => {
    const zero = fakeTerminal(0);
    const plain = progress(zero as never, { spinner: true });
    plain.status('running');
    plain.print('a line');
    expect(zero.written).toBe('a line\n');

    const wide = fakeTerminal(80);
    const spinning = progress(wide as never, { spinner: true });
    spinning.status('running');
    wide.columns = 0;
    wide.emit('resize');
    wide.written = '';
    spinning.print('after');
    spinning.status('still running');
    expect(wide.written).toBe('after\n');
    spinning.stop();
  });

  it('--quiet prints only scenarios that did not pass', () => {
    const err = fakeTerminal(80);
    const reporter = consoleReporter(err as never, { write: () => true } as never, { quiet: true });
    reporter.onEvent!({ kind: 'run-start', provider: 'netns', scenarios: ['a', 'b'] });
    reporter.onEvent!({ kind: 'scenario-start', id: 'a', title: 't' });
    reporter.onEvent!({ kind: 'scenario-end', result: scenario([phase('baseline', 'v')], 'passed', 'a') });
    reporter.onEvent!({ kind: 'scenario-end', result: scenario([failing('v')], 'failed', 'b') });
    reporter.onEvent!({ kind: 'run-end', result: {} as RunResult });
    const shown = stripVTControlCharacters(err.written);
    expect(shown).not.toContain('PASSED a');
    expect(shown).not.toContain('scenario(s) on netns');
    expect(shown).toContain('FAILED b');
  });
});

describe('the summary', () => {
  it('says each phase once for one fix, and names the variants where they matter', () => {
    expect(phaseCell(scenario([phase('baseline', 'x'), phase('faulted', 'x'), phase('fixed', 'x')]))).toBe(
      'baseline✓ faulted✓ fixed✓',
    );
    const two = [
      phase('baseline', 'restart'),
      phase('faulted', 'restart'),
      phase('fixed', 'restart'),
      phase('baseline', 'liberal'),
      phase('faulted', 'liberal', 'errored'),
    ];
    expect(phaseCell(scenario(two))).toBe('baseline✓ faulted: restart✓ liberal✗(errored) fixed: restart✓');
  });

  it('keeps a 41-character id aligned with the others', () => {
    const long = 'a'.repeat(41);
    const text = summary(
      {
        version: 1,
        provider: 'netns',
        durationMs: 0,
        summary: { passed: 2, measured: 0, failed: 0, errored: 0, skipped: 0 },
        scenarios: [scenario([], 'passed', 'short'), scenario([], 'passed', long)],
      },
      colorsFor({ isTTY: false }),
    );
    const [a, b] = text.split('\n');
    expect(a!.indexOf('1.00 s')).toBe(b!.indexOf('1.00 s'));
    const listed = listLines([
      { id: 'short', title: 'one' },
      { id: long, title: 'two' },
    ]).split('\n');
    expect(listed[0]!.indexOf('one')).toBe(listed[1]!.indexOf('two'));
  });

  it('prints a failure once, what it expected and observed, then its culprit: across fix variants, and the rule text once', () => {
    const lines = diagnosisLines(failing('x').probes[0]!);
    expect(lines[0]).toBe('culprit: rule filter/KUBE-SERVICES on node-a');
    expect(lines.join('\n').split(RULE).length - 1).toBe(1);

    const err = fakeTerminal(0);
    const reporter = consoleReporter(err as never, { write: () => true } as never, {
      reproduce: (r) => `netrepro run ${r.id}`,
    });
    reporter.onEvent!({
      kind: 'scenario-end',
      result: {
        ...scenario([failing('restart'), failing('liberal')], 'failed'),
        log: ['[restart] namespaces (10 ms)'],
      },
    });
    // while the run goes on, one line with the first reason; the story comes in the recap at its end
    expect(stripVTControlCharacters(err.written)).toMatch(
      /^✗ \S+ \(1\.00 s\) {2}faulted clusterip \(every fix variant\): expected timeout, observed refused\n$/,
    );
    reporter.onEvent!({ kind: 'run-end', result: {} as RunResult });
    const shown = stripVTControlCharacters(err.written);
    expect(shown).toContain('── 1 did not pass ──');
    expect(shown).toMatch(/ {2}reproduce: netrepro run \S+\n/);
    expect(shown.split('culprit:').length - 1).toBe(1);
    expect(shown).toContain(
      'faulted clusterip (every fix variant): expected timeout, observed refused\n    culprit: rule filter/KUBE-SERVICES on node-a',
    );
    // a failure is not an error: the lab's set-up lines are left out
    expect(shown).not.toContain('  | ');
  });
});

describe('selecting scenarios', () => {
  it('takes id patterns and --cni, and refuses a selection that is empty', async () => {
    const ids = async (args: string[], options = {}) =>
      (await selectRunScenarios(args, options)).map((s) => s.scenario.id);
    expect(await ids(['conntrack-invalid-*'])).toEqual([
      'conntrack-invalid-reset-cross-node',
      'conntrack-invalid-reset',
    ]);
    expect(await ids(['conntrack-*'], { cni: 'flannel' })).toEqual(['conntrack-invalid-reset-cross-node']);
    expect((await ids([], { cni: 'cilium' })).every((id) => /cilium|sock-lb/.test(id))).toBe(true);
    await expect(ids(['nothing-*'])).rejects.toThrow('no scenario id matches nothing-*');
    await expect(ids([], { cni: 'calico' })).rejects.toThrow('unknown CNI calico');
    await expect(ids(['service-no-endpoints-reject'], { cni: 'flannel' })).rejects.toThrow(
      'none of service-no-endpoints-reject is of CNI flannel',
    );
    await expect(ids([])).rejects.toThrow('name scenario ids, files or id patterns, or pass --all or --cni');
  });
});

describe('--help', () => {
  it('ends with examples for every command, each one a netrepro command line', () => {
    for (const command of buildCli().commands) {
      let help = '';
      command.configureOutput({ writeOut: (s) => (help += s) });
      command.outputHelp();
      expect(help, command.name()).toMatch(/\nExamples:\n( {2}# .+\n {2}\$ netrepro .+\n)+/);
    }
  });
});
