// Each folder of src/ is a layer, and the layers import downward only:
//   0 src/model       the scenario format and its semantics (types, schema, step and probe kinds, errors,
//                     placeholders, falsifiability rules), version, package root: pure, no provider
//   1 src/contract    the provider contract and what every provider shares (command runner, run ids,
//                     the teardown stack, the capability check, Kubernetes objects)
//   2 src/dataplane   what a node's dataplane is made of, by release: kube-proxy's and Cilium's rules,
//                     flannel's entries, the iptables model, the render of a node (shared by providers and `render`)
//   3 src/providers   netns, real (local; kind, minikube, k3s), the factory and run configuration
//   4 src/observe     probes, expectations and checks, evidence, traces and diagnosis
//   5 src/engine      running scenarios (run/), the gate, mutation testing
//   6 src/report      reporters
//   7 src/cli         the command line and its commands; src/index.ts, the library entry
// Layers 4-6 see providers only through the contract. Within src/providers each folder says who may import it
// (PROVIDER_SCOPES): a provider's folder only itself, shared code only the providers it serves, so shared code
// never reaches into a provider and no provider into its sibling. No file imports itself back through others.
import { readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const root = normalize(join(import.meta.dirname, '../..'));

/** The layers, lowest first: a file belongs to the first folder prefix it starts with. */
export const LAYERS: readonly [prefix: string, name: string][] = [
  ['src/model/', 'model'],
  ['src/contract/', 'contract'],
  ['src/dataplane/', 'dataplane'],
  ['src/providers/', 'providers'],
  ['src/observe/', 'observe'],
  ['src/engine/', 'engine'],
  ['src/report/', 'report'],
  ['src/cli/', 'cli'],
  ['src/index.ts', 'cli'],
];

export function layerOf(file: string): { rank: number; name: string } {
  const rank = LAYERS.findIndex(([prefix]) => file.startsWith(prefix));
  if (rank < 0)
    throw new Error(`${file} belongs to no layer: put it in one of the folders of LAYERS in test/unit/layers.test.ts`);
  const name = LAYERS[rank]![1];
  return { rank: LAYERS.findIndex(([, n]) => n === name), name };
}

/**
 * The folders of src/providers and who may import each (the longest folder holding the imported file counts):
 * a provider's own folder only itself; real/containers/ (what kind, minikube and k3s share) only them; real/common/
 * (what every real provider shares, `local` included) only real/. namespaces/ (the machinery of nodes that are
 * network namespaces, used by netns and real/local) is open to every provider. The factory and run configuration
 * (src/providers/*.ts) may import any of them.
 */
export const PROVIDER_SCOPES: readonly [folder: string, importers: string, what: string][] = [
  ['src/providers/netns/', 'src/providers/netns/', "the netns provider's folder"],
  ['src/providers/real/local/', 'src/providers/real/local/', "the local provider's folder"],
  ['src/providers/real/containers/kind/', 'src/providers/real/containers/kind/', "the kind provider's folder"],
  [
    'src/providers/real/containers/minikube/',
    'src/providers/real/containers/minikube/',
    "the minikube provider's folder",
  ],
  ['src/providers/real/containers/k3s/', 'src/providers/real/containers/k3s/', "the k3s provider's folder"],
  ['src/providers/real/containers/', 'src/providers/real/containers/', 'what the container-node providers share'],
  ['src/providers/real/common/', 'src/providers/real/', 'what the real providers share'],
];

/** Why `from` may not import `to` inside src/providers, or undefined. */
function providerScopeViolation(from: string, to: string): string | undefined {
  if (/^src\/providers\/[^/]+\.ts$/.test(from)) return undefined;
  const scope = PROVIDER_SCOPES.filter(([folder]) => to.startsWith(folder)).sort(
    (a, b) => b[0].length - a[0].length,
  )[0];
  if (!scope || from.startsWith(scope[1])) return undefined;
  return `${from} imports ${to}, inside ${scope[2]} (only ${scope[1]} imports it): move what both need to a folder both may import, or go through src/providers/create-provider.ts`;
}

/** Relative imports of a TypeScript source, static and dynamic, type-only ones included. */
export function importsOf(file: string, source: string): string[] {
  return [...source.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*)'(\.{1,2}\/[^']+)'/g)].map((m) =>
    relative(root, normalize(join(root, dirname(file), m[1]!))),
  );
}

const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', 'src'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f.endsWith('.ts'));
const graph = new Map(
  files.map((f) => [f, importsOf(f, readFileSync(join(root, f), 'utf8')).filter((to) => to.endsWith('.ts'))]),
);

/** Problems in an import graph: imports into a higher layer, concrete providers seen past the contract, one provider's folder from outside it. */
export function layerViolations(g: Map<string, string[]>): string[] {
  const out: string[] = [];
  for (const [from, tos] of g) {
    const a = layerOf(from);
    for (const to of tos) {
      const b = layerOf(to);
      if (b.rank > a.rank) out.push(`${from} (${a.name}) imports ${to} (${b.name}), a higher layer`);
      else if (b.name === 'providers' && ['observe', 'engine', 'report'].includes(a.name))
        out.push(
          `${from} (${a.name}) imports the concrete provider ${to}; use the contract in src/contract/provider.ts`,
        );
      else {
        const scope = providerScopeViolation(from, to);
        if (scope) out.push(scope);
      }
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
      ['src/model/a.ts', ['src/engine/run/b.ts']],
      ['src/engine/run/b.ts', ['src/model/a.ts']],
      ['src/report/c.ts', ['src/providers/netns/netns-lab.ts']],
      ['src/providers/netns/netns-lab.ts', []],
      ['src/providers/real/common/fit.ts', ['src/providers/netns/netns-lab.ts', 'src/providers/real/local/x.ts']],
      ['src/providers/real/local/x.ts', ['src/providers/real/containers/c.ts']],
      ['src/providers/real/containers/c.ts', ['src/providers/real/containers/kind/k.ts']],
      ['src/providers/real/containers/kind/k.ts', ['src/providers/real/containers/k3s/k.ts']],
      ['src/providers/real/containers/k3s/k.ts', []],
      ['src/providers/real/local/y.ts', ['src/providers/real/common/fit.ts', 'src/providers/namespaces/n.ts']],
      [
        'src/providers/real/containers/minikube/m.ts',
        ['src/providers/real/containers/c.ts', 'src/providers/real/common/fit.ts'],
      ],
      [
        'src/providers/create-provider.ts',
        ['src/providers/real/containers/kind/k.ts', 'src/providers/real/local/x.ts'],
      ],
    ]);
    expect(layerViolations(bad)).toEqual([
      'src/model/a.ts (model) imports src/engine/run/b.ts (engine), a higher layer',
      'src/report/c.ts (report) imports the concrete provider src/providers/netns/netns-lab.ts; use the contract in src/contract/provider.ts',
      "src/providers/real/common/fit.ts imports src/providers/netns/netns-lab.ts, inside the netns provider's folder (only src/providers/netns/ imports it): move what both need to a folder both may import, or go through src/providers/create-provider.ts",
      "src/providers/real/common/fit.ts imports src/providers/real/local/x.ts, inside the local provider's folder (only src/providers/real/local/ imports it): move what both need to a folder both may import, or go through src/providers/create-provider.ts",
      'src/providers/real/local/x.ts imports src/providers/real/containers/c.ts, inside what the container-node providers share (only src/providers/real/containers/ imports it): move what both need to a folder both may import, or go through src/providers/create-provider.ts',
      "src/providers/real/containers/c.ts imports src/providers/real/containers/kind/k.ts, inside the kind provider's folder (only src/providers/real/containers/kind/ imports it): move what both need to a folder both may import, or go through src/providers/create-provider.ts",
      "src/providers/real/containers/kind/k.ts imports src/providers/real/containers/k3s/k.ts, inside the k3s provider's folder (only src/providers/real/containers/k3s/ imports it): move what both need to a folder both may import, or go through src/providers/create-provider.ts",
    ]);
    expect(cycles(bad)).toEqual(['src/model/a.ts -> src/engine/run/b.ts -> src/model/a.ts']);
  });
});
