// The shipped scenarios on real kind (`--provider kind`) against the netns lab, both under the
// kube-proxy-1.20 profile, through the CLI as a user runs them. On this host kind runs on a Docker engine of
// each cluster's own from the kind build (`npm run build:kind`): every scenario that validates for kind's bridge
// shape gives the lab's verdict, phase by phase in every fix variant; the rest is skipped up front with the
// reason; and the host is left as it was, its kernel-wide settings and mounts included.
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostSnapshot, labNamespaces } from '../host-snapshot.ts';
import { kindSkipReason } from './real-support.ts';

const run = promisify(execFile);
const skip = kindSkipReason();
const PROFILE = 'kube-proxy-1.20';

/** What kind's bridge shape stands for at 1.20 (`netrepro validate --provider kind`); the rest is skipped. */
export const KIND_SCENARIOS = [
  'br-netfilter-clusterip-same-node',
  'br-netfilter-dns-unexpected-source',
  'e2e-headless-label',
  'e2e-multiport-endpoints',
  'e2e-publish-not-ready-addresses',
  'e2e-rejected-no-endpoints',
  'e2e-same-port-different-protocols',
  'e2e-service-proxy-name',
  'e2e-session-affinity-clusterip',
  'forward-policy-drop-docker',
  'ip-forward-off-node',
  'node-without-default-route',
  'nodeport-local-policy-no-local-endpoint',
  'service-no-endpoints-reject',
  'service-targetport-mismatch',
];

interface Report {
  scenarios: {
    id: string;
    verdict: string;
    durationMs: number;
    error?: { message: string };
    phases: {
      name: string;
      variant: string | null;
      status: string;
    }[];
    labs?: { runId: string }[];
  }[];
}

async function netrepro(dir: string, provider: string, ids: readonly string[]): Promise<Report> {
  const json = join(dir, `${provider}.json`);
  // two clusters at a time: each is a node container or two on an engine of its own (~1 GB, a core while it starts)
  const args = ['bin/netrepro.js', 'run', ...ids, '--parallel', '2', '--provider', provider, '--profile', PROFILE];
  await run('node', [...args, '--json', json], {
    maxBuffer: 64 << 20,
    env: { ...process.env, NETREPRO_CNI: 'bridge', NETREPRO_KIND_ENGINE: 'private' },
  }).catch((e: { code?: number }) => {
    if (e.code !== 1) throw e; // 1: a scenario failed, which the comparison below reports
  });
  return JSON.parse(await readFile(json, 'utf8')) as Report;
}

const byId = (r: Report) => new Map(r.scenarios.map((s) => [s.id, s]));
const phases = (s: Report['scenarios'][number]) => s.phases.map((p) => `${p.variant ?? ''}/${p.name}: ${p.status}`);

function verdictTable(lab: Report, kind: Report): string {
  const real = byId(kind);
  const time = (s?: { durationMs: number; verdict: string }) =>
    s && s.verdict !== 'skipped' ? `${(s.durationMs / 1000).toFixed(1)} s` : '-';
  const rows = KIND_SCENARIOS.map((id) => {
    const l = byId(lab).get(id);
    const r = real.get(id);
    return `| ${id} | ${l?.verdict ?? '-'} | ${r?.verdict ?? '-'} | ${time(l)} | ${time(r)} |`;
  });
  return ['| scenario | lab (netns) | real (kind) | lab time | kind time |', '|---|---|---|---|---|', ...rows, ''].join(
    '\n',
  );
}

describe.skipIf(skip)(`scenarios on real kind give the lab's verdicts${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const dir = join(import.meta.dirname, '../../reports/test-real-kind');
  let lab: Report;
  let kind: Report;
  let before: Record<string, string>;

  beforeAll(async () => {
    await mkdir(dir, { recursive: true });
    before = await hostSnapshot();
    lab = await netrepro(dir, 'netns', KIND_SCENARIOS);
    kind = await netrepro(dir, 'kind', ['--all']);
  }, 3_600_000); // a hang guard, not a budget
  afterAll(async () => {
    if (lab && kind) await writeFile(join(dir, 'verdicts.md'), verdictTable(lab, kind));
  });

  it('runs what it can stand for, and skips the rest up front with the reason', () => {
    const ran = kind.scenarios
      .filter((s) => s.verdict !== 'skipped')
      .map((s) => s.id)
      .sort();
    expect(ran).toEqual(KIND_SCENARIOS);
    const late = kind.scenarios.filter((s) => s.verdict === 'skipped' && s.phases.length > 0).map((s) => s.id);
    expect(late).toEqual([]);
  });

  for (const id of KIND_SCENARIOS) {
    it(`${id}: the lab's verdict, phase by phase`, () => {
      const l = byId(lab).get(id)!;
      const r = byId(kind).get(id)!;
      expect(r.error?.message).toBe(l.error?.message); // an errored run says why
      expect(r.verdict).toBe(l.verdict);
      expect(phases(r)).toEqual(phases(l));
    });
  }

  it('leaves the host as it found it: root namespace, kernel settings, mounts, no engine, namespace or state', async () => {
    expect(await hostSnapshot()).toEqual(before);
    // what this file's runs made, by their prefixes (another run may share the machine)
    const prefixes = kind.scenarios.flatMap((s) => s.labs ?? []).map((l) => `nr-${l.runId}-`);
    expect(prefixes.length).toBeGreaterThanOrEqual(KIND_SCENARIOS.length);
    const ours = (names: string[]) => names.filter((n) => prefixes.some((p) => n.includes(p)));
    expect(ours(await labNamespaces())).toEqual([]);
    expect(ours(await readdir('/var/tmp/netrepro-kind').catch(() => []))).toEqual([]);
    expect(ours(await readdir('/sys/fs/cgroup/memory').catch(() => []))).toEqual([]);
    expect(ours((await run('ps', ['-eo', 'args'])).stdout.split('\n'))).toEqual([]);
  });
});
