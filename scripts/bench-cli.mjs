#!/usr/bin/env node
// @ts-check
// CLI start-up against a bare `node -e 0`, medians of interleaved runs in one process (so a busy
// machine slows every command alike). Targets: --help <= 3x, list and validate <= 4x.
//   node scripts/bench-cli.mjs [--runs N] [--json]
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const runsArg = process.argv.indexOf('--runs');
const runs = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 21;
const bin = 'bin/netrepro.js';
const commands = [
  { name: 'node -e 0', argv: ['-e', '0'], limit: undefined },
  { name: '--help', argv: [bin, '--help'], limit: 3 },
  { name: 'list', argv: [bin, 'list'], limit: 4 },
  { name: 'validate FILE', argv: [bin, 'validate', 'scenarios/br-netfilter-clusterip-same-node.yaml'], limit: 4 },
];

/** @type {Record<string, number[]>} */
const times = Object.fromEntries(commands.map((c) => [c.name, []]));
for (let i = 0; i < runs + 2; i++) {
  for (const c of commands) {
    const t = process.hrtime.bigint();
    const r = spawnSync(process.execPath, c.argv, { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
    const ms = Number(process.hrtime.bigint() - t) / 1e6;
    if (r.status !== 0) throw new Error(`${c.name} exited ${r.status}: ${r.stderr}`);
    if (i >= 2) times[c.name]?.push(ms); // two warm-up rounds: disk cache
  }
}
const median = (/** @type {number[]} */ xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? (s[(s.length - 1) / 2] ?? 0) : ((s[s.length / 2 - 1] ?? 0) + (s[s.length / 2] ?? 0)) / 2;
};
const base = median(times['node -e 0'] ?? []);
const rows = commands.map((c) => {
  const m = median(times[c.name] ?? []);
  return {
    command: c.name,
    medianMs: Math.round(m),
    ratio: Number((m / base).toFixed(2)),
    limit: c.limit,
    ok: c.limit === undefined || m / base <= c.limit,
  };
});
if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify({ runs, rows }, null, 2)}\n`);
else {
  process.stdout.write(`${runs} interleaved runs each, medians:\n`);
  for (const r of rows)
    process.stdout.write(
      `  ${r.command.padEnd(14)} ${String(r.medianMs).padStart(5)} ms  ${r.ratio.toFixed(2)}x${r.limit ? ` (target <= ${r.limit}x) ${r.ok ? 'ok' : 'OVER'}` : ''}\n`,
    );
}
process.exitCode = rows.every((r) => r.ok) ? 0 : 1;
