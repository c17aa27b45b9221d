// The CI workflows as data: they parse, every action is pinned by commit with its release in a
// comment, and every job is bounded (read-only token, concurrency group, timeout).
// Nothing here can run a workflow; this checks their shape only.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { describe, expect, it } from 'vitest';
import { PINNED } from '../../src/providers/real/common/real-options.ts';

const DIR = new URL('../../.github/workflows', import.meta.url).pathname;
const files = readdirSync(DIR).filter((f) => /\.ya?ml$/.test(f));

interface Workflow {
  permissions?: Record<string, string>;
  concurrency?: { group?: string };
  jobs: Record<
    string,
    {
      'timeout-minutes'?: number;
      strategy?: { matrix?: { node?: number[] } };
      steps: { uses?: string; run?: string }[];
    }
  >;
}

describe.each(files)('workflow %s', (file) => {
  const text = readFileSync(join(DIR, file), 'utf8');
  const doc = parseDocument(text);
  const wf = doc.toJS() as Workflow;

  it('is valid YAML', () => {
    expect(doc.errors.map((e) => e.message)).toEqual([]);
  });

  it('has a read-only token, a concurrency group and a timeout on every job', () => {
    expect(wf.permissions).toEqual({ contents: 'read' });
    expect(wf.concurrency?.group).toBeTruthy();
    for (const [name, job] of Object.entries(wf.jobs)) expect(job['timeout-minutes'], name).toBeGreaterThan(0);
  });

  it('pins every action by a full commit SHA, with the release in a comment', () => {
    const uses = text.split('\n').filter((l) => /^\s*(- )?uses:/.test(l));
    expect(uses.length).toBeGreaterThan(0);
    for (const line of uses) expect(line).toMatch(/uses: [\w.-]+\/[\w.-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$/);
  });
});

describe('ci.yml', () => {
  it('tests every supported Node: 20, 22 and 24', () => {
    const wf = parseDocument(readFileSync(join(DIR, 'ci.yml'), 'utf8')).toJS() as Workflow;
    expect(wf.jobs.test?.strategy?.matrix?.node).toEqual([20, 22, 24]);
    expect(wf.jobs.test?.steps.some((s) => s.run?.includes('npm run typecheck'))).toBe(true);
  });
});

describe('real-clusters.yml', () => {
  it('pins the versions the code pins (one place: PINNED in real-options.ts)', () => {
    const doc = parseDocument(
      readFileSync(join(import.meta.dirname, '../../.github/workflows/real-clusters.yml'), 'utf8'),
    ).toJS() as {
      env: Record<string, string>;
      jobs: {
        scenarios: {
          env: Record<string, string>;
          strategy: { matrix: { provider: string[]; cni: string[]; shard: number[] } };
        };
        merge: { needs: string; steps: { run?: string }[] };
      };
    };
    expect(doc.env).toMatchObject({
      KIND_VERSION: PINNED.kindVersion,
      MINIKUBE_VERSION: PINNED.minikubeVersion,
      HELM_VERSION: PINNED.helmVersion,
      NETREPRO_CILIUM_VERSION: PINNED.ciliumChartVersion,
    });
    // every cell runs the pinned Kubernetes unless a dispatch names a candidate
    expect(doc.jobs.scenarios.env.NETREPRO_K8S_VERSION).toBe(`\${{ inputs.k8s_version || '${PINNED.k8sVersion}' }}`);
  });

  it('runs each cell in parts and merges them into one report per cell', () => {
    const doc = parseDocument(
      readFileSync(join(import.meta.dirname, '../../.github/workflows/real-clusters.yml'), 'utf8'),
    ).toJS() as {
      jobs: {
        scenarios: { strategy: { matrix: { shard: number[] } }; steps: { run?: string }[] };
        merge: { needs: string; steps: { run?: string }[] };
      };
    };
    const parts = doc.jobs.scenarios.strategy.matrix.shard;
    expect(parts).toEqual([1, 2]);
    expect(doc.jobs.scenarios.steps.some((s) => s.run?.includes(`--shard \${{ matrix.shard }}/${parts.length}`))).toBe(
      true,
    );
    expect(doc.jobs.merge.needs).toBe('scenarios');
    expect(doc.jobs.merge.steps.some((s) => s.run?.includes('bin/netrepro.js merge'))).toBe(true);
  });
});
