// vitest globalSetup: tests that start `node bin/netrepro.js` run the compiled CLI, so compile it
// first when a source is newer than dist/ (an edit since the last build). A fresh build is skipped in
// milliseconds; a stale one costs one tsc run (~2 s) instead of testing yesterday's code.
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../src/model/package-root.ts';

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

export default function buildCli(): void {
  const built = (() => {
    try {
      return statSync(join(PACKAGE_ROOT, 'dist/cli/main.js')).mtimeMs;
    } catch {
      return 0;
    }
  })();
  const sources = Math.max(
    newestSource(join(PACKAGE_ROOT, 'src')),
    statSync(join(PACKAGE_ROOT, 'tsconfig.build.json')).mtimeMs,
  );
  if (sources <= built) return;
  execFileSync('node', [join(PACKAGE_ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: PACKAGE_ROOT,
    stdio: 'inherit',
  });
}
