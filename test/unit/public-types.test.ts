// The library's public types type-check for a consumer without the optional dependencies (the real
// providers' @kubernetes/client-node and testcontainers) and without skipLibCheck: no declaration file
// reachable from dist/index.d.ts names one of them.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/model/package-root.ts';

// the optional peer dependencies: a consumer installs them only for a real-cluster provider
const OPTIONAL = Object.entries(
  (
    JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as {
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
    }
  ).peerDependenciesMeta,
)
  .filter(([, meta]) => meta.optional)
  .map(([name]) => name);

/** Every declaration file the entry reaches, and each import of an optional dependency among them. */
function reach(entry: string): { files: Set<string>; optional: string[] } {
  const files = new Set<string>();
  const optional: string[] = [];
  const walk = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(/(?:from|import\()\s*'([^']+)'/g)) {
      const spec = m[1]!;
      if (spec.startsWith('.')) {
        const next = resolve(dirname(file), spec.replace(/\.(ts|js)$/, '.d.ts'));
        if (existsSync(next)) walk(next);
      } else if (OPTIONAL.some((o) => spec === o || spec.startsWith(`${o}/`)))
        optional.push(`${file.slice(PACKAGE_ROOT.length + 1)} imports ${spec}`);
    }
  };
  walk(entry);
  return { files, optional };
}

describe('public types', () => {
  it('reach no optional dependency from dist/index.d.ts', () => {
    const { files, optional } = reach(join(PACKAGE_ROOT, 'dist/index.d.ts'));
    expect(files.size).toBeGreaterThan(20);
    expect(optional).toEqual([]);
  });
});
