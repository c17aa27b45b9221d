// The layers import downward only, and no module imports itself back through others:
//   0 model        harness/model (types, schema, step kinds, errors, placeholders), version, package root
//   1 contract     clusters/provider.ts and what every provider shares (command runner, run ids, names,
//                  the teardown stack, the capability check)
//   2 providers    clusters/netns, kind, minikube, k3s, real, create-provider
//   3 observation  harness/probes, expect, evidence, trace, diagnosis
//   4 engine       harness/engine, gate, mutate
//   5 reports      harness/report
//   6 CLI          harness/cli.ts, cli/, commands/, main, index
// Layers 3-5 see providers only through the contract (layer 1), never a concrete one.
import { readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const root = normalize(join(import.meta.dirname, '../..'));

const LAYERS: [RegExp, number, string][] = [
  [/^harness\/(model\/|version\.ts|package-root\.ts)/, 0, 'model'],
  [/^clusters\/(provider|provider-names|provider-support|teardown-stack|command|namespace-entry|native-spawner|run-id|kube-objects)\.ts$/, 1, 'contract'],
  [/^clusters\//, 2, 'providers'],
  [/^harness\/(probes|expect|evidence|trace|diagnosis)\//, 3, 'observation'],
  [/^harness\/(engine|gate|mutate)\//, 4, 'engine'],
  [/^harness\/report\//, 5, 'reports'],
  [/^harness\/(cli\.ts|cli\/|commands\/|main\.ts|index\.ts)/, 6, 'cli'],
];

export function layerOf(file: string): { rank: number; name: string } {
  const hit = LAYERS.find(([re]) => re.test(file));
  if (!hit) throw new Error(`${file} belongs to no layer: add it to LAYERS in test/unit/layers.test.ts`);
  return { rank: hit[1], name: hit[2] };
}

/** Relative imports of a TypeScript source, static and dynamic, type-only ones included. */
export function importsOf(file: string, source: string): string[] {
  return [...source.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*)'(\.{1,2}\/[^']+)'/g)].map((m) => relative(root, normalize(join(root, dirname(file), m[1]!))));
}

const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', 'harness', 'clusters'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f.endsWith('.ts'));
const graph = new Map(files.map((f) => [f, importsOf(f, readFileSync(join(root, f), 'utf8')).filter((to) => to.endsWith('.ts'))]));

/** Problems in an import graph: imports into a higher layer, concrete providers seen past the contract. */
export function layerViolations(g: Map<string, string[]>): string[] {
  const out: string[] = [];
  for (const [from, tos] of g) {
    const a = layerOf(from);
    for (const to of tos) {
      const b = layerOf(to);
      if (b.rank > a.rank) out.push(`${from} (${a.name}) imports ${to} (${b.name}), a higher layer`);
      else if (b.name === 'providers' && a.rank >= 3 && a.rank <= 5) out.push(`${from} (${a.name}) imports the concrete provider ${to}; use the contract in clusters/provider.ts`);
    }
  }
  return out;
}

/** Every import cycle, as the files around it. */
export function cycles(g: Map<string, string[]>): string[] {
  const found: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (f: string) => {
    state.set(f, 'open');
    stack.push(f);
    for (const to of g.get(f) ?? []) {
      if (state.get(to) === 'open') found.push([...stack.slice(stack.indexOf(to)), to].join(' -> '));
      else if (!state.has(to)) visit(to);
    }
    stack.pop();
    state.set(f, 'done');
  };
  for (const f of g.keys()) if (!state.has(f)) visit(f);
  return found;
}

describe('layers', () => {
  it('every source file imports its own layer or lower ones, and providers only through the contract', () => {
    expect(layerViolations(graph)).toEqual([]);
  });

  it('no import cycles', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('the check fails on an upward import and on a cycle', () => {
    const bad = new Map([
      ['harness/model/a.ts', ['harness/engine/b.ts']],
      ['harness/engine/b.ts', ['harness/model/a.ts']],
      ['harness/report/c.ts', ['clusters/netns/netns-lab.ts']],
      ['clusters/netns/netns-lab.ts', []],
    ]);
    expect(layerViolations(bad)).toEqual([
      'harness/model/a.ts (model) imports harness/engine/b.ts (engine), a higher layer',
      'harness/report/c.ts (reports) imports the concrete provider clusters/netns/netns-lab.ts; use the contract in clusters/provider.ts',
    ]);
    expect(cycles(bad)).toEqual(['harness/model/a.ts -> harness/engine/b.ts -> harness/model/a.ts']);
  });
});
