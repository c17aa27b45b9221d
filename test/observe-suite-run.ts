// The scenario suite, run ONCE per `npm test` by the lab and host projects' globalSetup
// (test/suite-run.global.ts), with everything observed around it; test files read it through
// test/suite-run.ts. This module runs in vitest's main process: it must not import 'vitest'.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { spawnCommand } from '../src/contract/command.ts';
import { netnsAvailability, NetnsProvider } from '../src/providers/netns/netns-provider.ts';
import type { RunResult } from '../src/engine/run/results.ts';
import { runSuite } from '../src/engine/run/run-suite.ts';
import { loadAllScenarios } from '../src/model/find-scenarios.ts';
import { extendedHostSnapshot } from './host/host-state.ts';

export interface SuiteRun {
  /** Why the suite did not run (no lab here); the lab tests skip with the same reason (fail under CI). */
  skipped?: string;
  /** The run itself threw (an error, not a failed scenario). */
  error?: string;
  parallel: number;
  result?: RunResult;
  /** Absolute path of the evidence; the run was handed it relative to the working directory. */
  reportDir: string;
  /** tcpdump on every root-namespace interface, filtered to lab addresses, during the whole run. */
  rootCapture?: { packets: string[]; summary: string };
  /** extendedHostSnapshot() right before and right after the run. */
  hostBefore?: Record<string, string>;
  hostAfter?: Record<string, string>;
  /** Per lab (run id): when its first namespace appeared and its last one went, ms since the run started. */
  labLifetimes: Record<string, { from: number; to: number }>;
  /** Namespaces, state and cgroup directories of the run's labs still there after it. */
  leftovers: string[];
}

/** The lab's address ranges: pod network, service network, node fabric. */
export const LAB_FILTER = 'net 10.244.0.0/16 or net 10.96.0.0/12 or net 172.18.0.0/24';
// --immediate-mode: without it TPACKET_V3 hands packets over per block (up to 1 s late), and a
// capture stopped right after the traffic reports "0 packets captured, N received by filter"
export const TCPDUMP = ['tcpdump', '-i', 'any', '-nn', '-l', '--immediate-mode', LAB_FILTER];
export const PACKET = /^\d{2}:\d{2}:\d{2}\.\d+ /;

const PARALLEL = 2;

export async function observeSuiteRun(): Promise<SuiteRun> {
  const tmp = await mkdtemp(join(tmpdir(), 'netrepro-suite-'));
  const run: SuiteRun = { parallel: PARALLEL, reportDir: tmp, labLifetimes: {}, leftovers: [] };
  if (process.env.NETREPRO_SUITE_RUN === 'skip')
    return { ...run, skipped: 'NETREPRO_SUITE_RUN=skip (tests that read the suite run are skipped)' };
  const availability = await netnsAvailability();
  if (!availability.ok) return { ...run, skipped: `${availability.reason} (${availability.hint})` };
  const controller = new AbortController();
  const guard = setTimeout(() => controller.abort(), 900_000); // a hang guard only: 34 scenarios take ~45 s idle here, over 300 s at load 27
  const started = performance.now();
  const lifetimes = watchLabLifetimes(started);
  try {
    const scenarios = await loadAllScenarios();
    run.hostBefore = await extendedHostSnapshot();
    const capture = spawnCommand(TCPDUMP);
    try {
      await capture.waitFor(/listening on/, 10_000); // tcpdump's readiness line, on stderr
      run.result = await runSuite(scenarios, {
        provider: new NetnsProvider(),
        parallel: PARALLEL,
        reportDir: relative(process.cwd(), tmp),
        signal: controller.signal,
        emit: () => {},
      });
    } finally {
      await capture.stop('SIGINT');
      const lines = capture.lines();
      run.rootCapture = {
        packets: lines.filter((l) => PACKET.test(l)),
        summary: lines.find((l) => /packets captured/.test(l)) ?? '',
      };
    }
    run.hostAfter = await extendedHostSnapshot();
    const ids = run.result.scenarios.flatMap((s) => s.labs.map((l) => l.runId));
    const seen = lifetimes.stop();
    run.labLifetimes = Object.fromEntries(ids.flatMap((id) => (seen.has(id) ? [[id, seen.get(id)!]] : [])));
    run.leftovers = await leftoversOf(ids);
  } catch (e) {
    run.error = (e as Error).stack ?? String(e);
  } finally {
    lifetimes.stop();
    clearTimeout(guard);
  }
  return run;
}

export async function removeSuiteRun(run: SuiteRun): Promise<void> {
  await rm(run.reportDir, { recursive: true, force: true });
}

/** Lab namespaces while the suite runs, by run id: when first and last seen. */
function watchLabLifetimes(t0: number): { stop(): Map<string, { from: number; to: number }> } {
  const seen = new Map<string, { from: number; to: number }>();
  const look = async () => {
    const now = Math.round(performance.now() - t0);
    for (const name of await readdir('/run/netns').catch(() => [] as string[])) {
      const id = /^nr-([0-9a-f]{6})-/.exec(name)?.[1];
      if (!id) continue;
      const span = seen.get(id);
      seen.set(id, { from: Math.min(span?.from ?? now, now), to: Math.max(span?.to ?? now, now) });
    }
  };
  // polled, not fs.watch: /run/netns may not exist before the first lab, and a lab lives far longer than 10 ms
  let looking = false;
  const timer = setInterval(() => {
    if (looking) return;
    looking = true;
    void look().finally(() => (looking = false));
  }, 10);
  return {
    stop() {
      clearInterval(timer);
      return seen;
    },
  };
}

async function leftoversOf(runIds: string[]): Promise<string[]> {
  const mine = (names: string[], match: (n: string) => boolean) => names.filter(match);
  const namespaces = mine(await readdir('/run/netns').catch(() => []), (n) =>
    runIds.some((id) => n.startsWith(`nr-${id}-`)),
  );
  const state = mine(await readdir('/run/netrepro').catch(() => []), (n) => runIds.includes(n)).map(
    (n) => `/run/netrepro/${n}`,
  );
  const cgroups = mine(await readdir('/sys/fs/cgroup/unified/netrepro').catch(() => []), (n) => runIds.includes(n)).map(
    (n) => `/sys/fs/cgroup/unified/netrepro/${n}`,
  );
  return [...namespaces, ...state, ...cgroups];
}
