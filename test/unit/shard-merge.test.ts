// Spreading a run over machines: --shard i/n gives every scenario to exactly one part, the same on every
// machine, balanced by recorded cost; merge joins the parts into the run a single machine would report.
import { describe, expect, it } from 'vitest';
import { mergeRuns } from '../../src/cli/commands/merge.ts';
import { parseShard, recordedCosts, shardOf } from '../../src/cli/shard.ts';
import type { RunResult, ScenarioResult } from '../../src/engine/run/results.ts';
import { loadAllScenarios } from '../../src/model/find-scenarios.ts';

describe('--shard', () => {
  it('splits every scenario into exactly one of n parts, balanced by the recorded netns cost, in the order selected', async () => {
    const all = await loadAllScenarios();
    const costs = await recordedCosts('netns');
    const parts = [1, 2, 3].map((index) => shardOf(all, { index, count: 3 }, costs));
    expect(
      parts
        .flat()
        .map((s) => s.scenario.id)
        .sort(),
    ).toEqual(all.map((s) => s.scenario.id).sort());
    for (const part of parts) {
      const order = all.filter((s) => part.includes(s)).map((s) => s.scenario.id);
      expect(part.map((s) => s.scenario.id)).toEqual(order);
    }
    const total = (part: typeof all) => part.reduce((t, s) => t + (costs.get(s.scenario.id) ?? 0), 0);
    const loads = parts.map(total);
    // greedy by cost: no part exceeds another by more than the costliest scenario
    expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(Math.max(...costs.values()));
    expect(shardOf(all, { index: 2, count: 3 }, costs)).toEqual(parts[1]); // the same on every call
  });

  it('refuses a part outside 1..n', () => {
    for (const bad of ['0/3', '4/3', '1/0', 'two/3', '1-3']) expect(() => parseShard(bad), bad).toThrow(/--shard/);
    expect(parseShard('3/3')).toEqual({ index: 3, count: 3 });
  });
});

describe('merge', () => {
  const scenario = (id: string, verdict: ScenarioResult['verdict']): ScenarioResult =>
    ({
      id,
      title: id,
      file: `scenarios/${id}.yaml`,
      verdict,
      durationMs: 10,
      phases: [],
      labs: [],
      log: [],
    }) as ScenarioResult;
  const run = (provider: string, ms: number, ...scenarios: ScenarioResult[]): RunResult => ({
    version: 1,
    provider,
    durationMs: ms,
    summary: { passed: 0, measured: 0, failed: 0, errored: 0, skipped: 0 },
    scenarios,
  });

  it("is one run: every scenario in its file's order, the counts recounted, the slowest part's wall time", () => {
    const merged = mergeRuns(
      [run('netns', 30, scenario('c', 'failed'), scenario('a', 'passed')), run('netns', 50, scenario('b', 'measured'))],
      ['s1.json', 's2.json'],
    );
    expect(merged.scenarios.map((s) => s.id)).toEqual(['a', 'b', 'c']);
    expect(merged.summary).toEqual({ passed: 1, measured: 1, failed: 1, errored: 0, skipped: 0 });
    expect(merged.durationMs).toBe(50);
  });

  it('refuses parts of different providers and a scenario in two parts', () => {
    expect(() => mergeRuns([run('netns', 1, scenario('a', 'passed')), run('kind', 1)], ['x', 'y'])).toThrow(
      /different providers/,
    );
    expect(() =>
      mergeRuns([run('netns', 1, scenario('a', 'passed')), run('netns', 1, scenario('a', 'passed'))], ['x', 'y']),
    ).toThrow('a is in both x and y');
  });
});
