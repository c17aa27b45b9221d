// `npm run costs -- REPORT.json...`: each scenario's duration in the given run reports, recorded per provider
// in scenarios/costs.json, which `run --shard i/n` balances its parts by. A provider's entry is replaced by
// the reports of that provider; the others stay.
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../scenarios/costs.json', import.meta.url);
const costs = JSON.parse(readFileSync(file, 'utf8').toString() || '{}') as Record<string, Record<string, number>>;
const fresh: Record<string, Record<string, number>> = {};
for (const report of process.argv.slice(2)) {
  const run = JSON.parse(readFileSync(report, 'utf8')) as {
    provider: string;
    scenarios: { id: string; verdict: string; durationMs: number }[];
  };
  for (const s of run.scenarios.filter((x) => x.verdict !== 'skipped'))
    (fresh[run.provider] ??= {})[s.id] = Math.max(100, Math.round(s.durationMs / 100) * 100);
}
for (const [provider, byId] of Object.entries(fresh))
  costs[provider] = Object.fromEntries(Object.entries(byId).sort(([a], [b]) => a.localeCompare(b)));
writeFileSync(file, `${JSON.stringify(costs, null, 2)}\n`);
console.log(
  `scenarios/costs.json: ${Object.entries(fresh)
    .map(([p, c]) => `${p} ${Object.keys(c).length}`)
    .join(', ')}`,
);
