// `run --shard i/n`: one of n parts of a selection, the same on every machine, balanced by each scenario's
// recorded cost (scenarios/costs.json, per provider): the costliest first, each to the part with the least
// so far (ties: the lower part); each part keeps the selection's order. A scenario without a recorded cost
// counts the median of those with one. `netrepro merge` joins the parts' JSON reports into one run.
import { readFile } from 'node:fs/promises';
import { HarnessError } from '../model/errors.ts';
import type { LoadedScenario } from '../model/load-scenario.ts';
import { packagePath } from '../model/package-root.ts';

export interface Shard {
  /** 1-based. */
  index: number;
  count: number;
}

export function parseShard(text: string): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(text);
  const [index, count] = m ? [Number(m[1]), Number(m[2])] : [0, 0];
  if (!m || count < 1 || index < 1 || index > count)
    throw new HarnessError('USAGE', `--shard ${text}: expected I/N with 1 <= I <= N`, 'e.g. --shard 2/3');
  return { index, count };
}

/** Recorded milliseconds per scenario id for `provider` (nothing where none is recorded). */
export async function recordedCosts(provider: string): Promise<Map<string, number>> {
  const file = await readFile(packagePath('scenarios/costs.json'), 'utf8').catch(() => '{}');
  const byProvider = JSON.parse(file) as Record<string, Record<string, number>>;
  return new Map(Object.entries(byProvider[provider] ?? byProvider.netns ?? {}));
}

export function shardOf(scenarios: readonly LoadedScenario[], shard: Shard, costs: ReadonlyMap<string, number>) {
  const known = [...costs.values()].sort((a, b) => a - b);
  const fallback = known.length ? known[Math.floor(known.length / 2)]! : 1;
  const cost = (s: LoadedScenario) => costs.get(s.scenario.id) ?? fallback;
  const order = [...scenarios].sort((a, b) => cost(b) - cost(a) || a.scenario.id.localeCompare(b.scenario.id));
  const load = Array.from({ length: shard.count }, () => 0);
  const part = new Map<string, number>();
  for (const s of order) {
    const least = load.indexOf(Math.min(...load));
    load[least]! += cost(s);
    part.set(s.scenario.id, least + 1);
  }
  return scenarios.filter((s) => part.get(s.scenario.id) === shard.index);
}
