// What the root namespace and the host look like, beyond test/host-snapshot.ts: the nftables
// ruleset, pinned BPF objects and cgroup v2 directories (the cilium datapath uses both, and must
// keep them to its own run's private places).
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand } from '../../src/contract/command.ts';
import type { RunResult } from '../../src/engine/run/results.ts';
import { hostSnapshot } from '../host-snapshot.ts';

/** Every directory (and, for bpffs, file) below `root`, relative to it; `[missing]` when absent. */
async function tree(root: string, dirsOnly: boolean): Promise<string> {
  const out: string[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (e) {
      if (dir === root) out.push(`[${(e as NodeJS.ErrnoException).code ?? 'unreadable'}]`);
      return;
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        out.push(`${path.slice(root.length + 1)}/`);
        if (depth < 8) await walk(path, depth + 1);
      } else if (!dirsOnly) out.push(path.slice(root.length + 1));
    }
  };
  await walk(root, 0);
  return out.join('\n');
}

export async function extendedHostSnapshot(): Promise<Record<string, string>> {
  // (nft missing entirely is recorded as such, not thrown: the comparison then still covers the rest)
  const nft = await runCommand(['nft', 'list', 'ruleset'], { reject: false }).catch((e: Error) => ({
    exitCode: 'not runnable',
    stdout: '',
    stderr: e.message.split('\n')[0] ?? '',
  }));
  return {
    ...(await hostSnapshot()),
    // counters and set timeouts change on their own; the rules are what must stay
    nftables:
      nft.exitCode === 0
        ? nft.stdout.replace(/counter packets \d+ bytes \d+/g, 'counter').replace(/expires \S+/g, '')
        : `[nft exit ${nft.exitCode}] ${nft.stderr.trim()}`,
    bpffs: await tree('/sys/fs/bpf', false),
    cgroupUnified: await tree('/sys/fs/cgroup/unified', true),
  };
}

/**
 * `scenario/variant/phase/probe` -> what must be the same in every run: the observed outcome of a single
 * probe; for a repeated probe (a distribution, e.g. ~50% failures over endpoints spread by statistic
 * random) whether its expectation held, since its majority outcome legitimately varies run to run.
 */
export function observedOutcomes(result: RunResult): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of result.scenarios) {
    for (const p of s.phases) {
      for (const probe of p.probes) {
        const repeated = probe.detail.distribution !== undefined;
        out[`${s.id}/${p.variant}/${p.name}/${probe.id}`] = repeated
          ? `distribution ${probe.matched ? 'matched' : 'did not match'}`
          : probe.observed;
      }
    }
  }
  return out;
}

export function verdicts(result: RunResult): Record<string, string> {
  return Object.fromEntries(result.scenarios.map((s) => [s.id, s.verdict]));
}

/**
 * The snapshot without other runs' cgroups: the machine may be shared, and labs of other processes
 * come and go in /sys/fs/cgroup/unified/netrepro/<their run id> meanwhile. The runs in `own` stay in,
 * so a leftover of ours still shows.
 */
export function ignoringOtherRuns(
  snapshot: Record<string, string>,
  own: readonly string[],
  others: ReadonlySet<string>,
): Record<string, string> {
  // the netns lab's cgroups (netrepro/<run>/) and a real cluster's (a local node's kubelet root, a kind engine's
  // containers: nr-<run>-...)
  const foreign = (line: string) => {
    const id = /^(?:netrepro\/([0-9a-f]{6})\/|nr-([0-9a-f]{6})-)/.exec(line);
    const run = id?.[1] ?? id?.[2];
    return run !== undefined && !own.includes(run);
  };
  const lines = (snapshot.cgroupUnified ?? '')
    .split('\n')
    .filter((l) => !foreign(l) && !(l === 'netrepro/' && others.size > 0));
  return { ...snapshot, cgroupUnified: lines.join('\n') };
}

/** Run ids in a snapshot's cgroups that are not in `own`. */
export function otherRuns(snapshot: Record<string, string>, own: readonly string[]): Set<string> {
  return new Set(
    [...(snapshot.cgroupUnified ?? '').matchAll(/^netrepro\/([0-9a-f]{6})\/$/gm)]
      .map((m) => m[1]!)
      .filter((id) => !own.includes(id)),
  );
}
