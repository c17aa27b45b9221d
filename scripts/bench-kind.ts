// Timing of a kind cluster on a Docker engine of its own (root, after `npm run build:kind`): N times a one-node
// bridge cluster with one pod and one Service, then torn down. Per round: the engine up (its data root copied,
// dockerd listening), `kind create cluster`, the whole provisioning (CNI, kube-proxy synced, workload Ready),
// the teardown. Prints min / median / max. Not a test: nothing here asserts on time.
//   npm run bench:kind -- [--runs N]
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { ONE_NODE_TOPOLOGY as topology } from '../test/real/one-node-topology.ts';
import { KindProvider } from '../src/providers/real/containers/kind/kind-provider.ts';
import { newRunId, runPrefix } from '../src/contract/run-id.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
const runs = Number(values.runs);
const samples = new Map<string, number[]>();
const add = (k: string, v: number) => samples.set(k, [...(samples.get(k) ?? []), v]);

for (let i = 0; i < runs; i++) {
  const runId = newRunId();
  const lines: string[] = [];
  const t0 = performance.now();
  const cluster = await new KindProvider({ kindEngine: 'private', k8sVersion: 'v1.20.2' }).provision(topology, {
    runId,
    prefix: runPrefix(runId),
    signal: new AbortController().signal,
    log: (l) => lines.push(l),
  });
  add('provision (cluster + workload Ready)', performance.now() - t0);
  for (const l of lines) {
    const engine = /^docker engine \S+ up .* in (\d+) ms$/.exec(l);
    if (engine) add('docker engine up', Number(engine[1]));
    const create = /^kind create cluster \S+: (\d+) ms$/.exec(l);
    if (create) add('kind create cluster', Number(create[1]));
  }
  const t1 = performance.now();
  await cluster.destroy();
  add('teardown', performance.now() - t1);
  process.stderr.write(`round ${i + 1}/${runs}: ${lines.filter((l) => / ms$/.test(l)).join('; ')}\n`);
}

const stat = (v: number[]) => {
  const s = [...v].sort((a, b) => a - b);
  return { min: s[0]!, median: s[Math.floor(s.length / 2)]!, max: s.at(-1)! };
};
console.log(`kind on its own engine, ${runs} rounds, load average ${loadavg()[0]!.toFixed(1)} at the end`);
console.log('| metric | min | median | max |\n|---|---|---|---|');
for (const [k, v] of samples) {
  const { min, median, max } = stat(v);
  console.log(
    `| ${k} | ${(min / 1000).toFixed(1)} s | ${(median / 1000).toFixed(1)} s | ${(max / 1000).toFixed(1)} s |`,
  );
}
