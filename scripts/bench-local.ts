// Timing and memory of the `local` provider's cluster (root, after `npm run build:kubernetes`): N times a
// two-node cluster with the oracle's workload (6 pods, 6 Services), then torn down. Per round: the
// bring-up's milestones (from the first namespace to kube-proxy synced on every node), the whole
// provisioning (workload Ready included), the teardown, and the memory of everything the cluster runs
// (the sum of Pss over the processes in its namespaces and in its kubelets' cgroups, read with the
// workload up). Prints min / median / max. Not a test: nothing here asserts on time.
//   npm run bench:local -- [--runs N]
import { readdir, readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { LocalProvider } from '../src/providers/real/local/local-provider.ts';
import { cgroupHierarchies } from '../src/providers/real/local/local-cluster-up.ts';
import { namespacePids } from '../src/providers/namespaces/namespace-pids.ts';
import { newRunId, runPrefix } from '../src/contract/run-id.ts';
import { ORACLE_TOPOLOGY } from '../test/real/oracle-topology.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
const runs = Number(values.runs);
const samples = new Map<string, number[]>();
const add = (k: string, v: number) => samples.set(k, [...(samples.get(k) ?? []), v]);

async function clusterPids(prefix: string): Promise<Set<number>> {
  const pids = new Set<number>();
  const nss = (await readdir('/run/netns')).filter((n) => n.startsWith(prefix)).map((n) => `/run/netns/${n}`);
  for (const list of (await namespacePids(nss)).values()) for (const p of list) pids.add(p);
  const memory = (await cgroupHierarchies()).find((h) => h.endsWith('/memory'));
  const walk = async (dir: string): Promise<void> => {
    for (const p of (await readFile(`${dir}/cgroup.procs`, 'utf8').catch(() => '')).split('\n').filter(Boolean))
      pids.add(Number(p));
    for (const e of await readdir(dir, { withFileTypes: true }).catch(() => []))
      if (e.isDirectory()) await walk(`${dir}/${e.name}`);
  };
  if (memory) for (const d of (await readdir(memory)).filter((d) => d.startsWith(prefix))) await walk(`${memory}/${d}`);
  return pids;
}

async function pssMiB(pids: Set<number>): Promise<number> {
  let kb = 0;
  for (const pid of pids) {
    const text = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8').catch(() => '');
    kb += Number(/^Pss:\s+(\d+) kB/m.exec(text)?.[1] ?? 0);
  }
  return kb / 1024;
}

for (let i = 0; i < runs; i++) {
  const runId = newRunId();
  const prefix = runPrefix(runId);
  const lines: string[] = [];
  const t0 = performance.now();
  const cluster = await new LocalProvider().provision(ORACLE_TOPOLOGY, {
    runId,
    prefix,
    signal: new AbortController().signal,
    log: (l) => lines.push(l),
  });
  add('provision (cluster + workload Ready)', performance.now() - t0);
  for (const l of lines) {
    const m = /^local: (.*) \(([\d.]+) s\)$/.exec(l);
    if (m && /cluster up|kube-apiserver ready|etcd ready|Ready|synced/.test(m[1]!)) add(m[1]!, Number(m[2]) * 1000);
  }
  const pids = await clusterPids(prefix);
  add('memory MiB (Pss)', await pssMiB(pids));
  add('processes', pids.size);
  const t1 = performance.now();
  await cluster.destroy();
  add('teardown', performance.now() - t1);
  process.stderr.write(`round ${i + 1}/${runs}: cluster up ${lines.find((l) => l.includes('cluster up'))}\n`);
}

const stat = (v: number[]) => {
  const s = [...v].sort((a, b) => a - b);
  return { min: s[0]!, median: s[Math.floor(s.length / 2)]!, max: s.at(-1)! };
};
console.log(`local cluster, ${runs} rounds, load average ${loadavg()[0]!.toFixed(1)} at the end`);
console.log('| metric | min | median | max |\n|---|---|---|---|');
for (const [k, v] of samples) {
  const { min, median, max } = stat(v);
  const f = (x: number) => (k.startsWith('memory') || k === 'processes' ? x.toFixed(0) : `${(x / 1000).toFixed(1)} s`);
  console.log(`| ${k} | ${f(min)} | ${f(median)} | ${f(max)} |`);
}
