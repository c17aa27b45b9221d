// src/engine/gate/run-gate.ts, runGate: each scenario's fault-only run under both profiles, assessed and
// compared. runScenario is a stand-in: its result depends on the profile the scenario was given.
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as engine from '../../../src/engine/run/run-scenario.ts';
import { runGate } from '../../../src/engine/gate/run-gate.ts';
import type { ClusterProvider } from '../../../src/contract/provider.ts';
import type { LoadedScenario } from '../../../src/model/load-scenario.ts';
import type { Profile } from '../../../src/model/profile.ts';
import type { Scenario } from '../../../src/model/scenario-schema.ts';
import { BASELINE_OK, CONTROLS_HELD, read, run, saw, SCENARIO } from './gate-results.ts';

vi.mock('../../../src/engine/run/run-scenario.ts', async (importOriginal) => ({
  ...(await importOriginal<typeof engine>()),
  runScenario: vi.fn(),
}));

const old: Profile = { name: 'kube-proxy-1.14', description: 'old', kubeProxy: '1.14', nodeSysctls: {} } as Profile;
const next: Profile = {
  name: 'kube-proxy-1.15',
  description: 'new',
  kubeProxy: '1.15',
  nodeSysctls: { 'net.netfilter.nf_conntrack_tcp_be_liberal': 1 },
} as Profile;
const topology = { nodes: [{ name: 'a', sysctls: {} }], kubeProxy: '1.29', cilium: {} };
const loaded = (id: string, purpose = 'reproduce'): LoadedScenario => ({
  file: `${id}.yaml`,
  scenario: { ...SCENARIO, id, purpose, topology } as unknown as Scenario,
});

const susceptible = run(BASELINE_OK, {
  probes: [saw('sym', 'timeout', true), saw('ctl', 'ok', true)],
  checks: [read('drops', true), ...CONTROLS_HELD],
});
const immune = run(BASELINE_OK, {
  probes: [saw('sym', 'ok', false), saw('ctl', 'ok', true)],
  checks: [read('drops', false), ...CONTROLS_HELD],
});
const broken = run(BASELINE_OK, {
  probes: [saw('sym', 'ok', false), saw('ctl', 'timeout', false)],
  checks: CONTROLS_HELD,
});

/** Each run's result by the kube-proxy version the profile gave the scenario. */
function byVersion(results: Record<string, ReturnType<typeof run>>) {
  vi.mocked(engine.runScenario).mockImplementation(async ({ scenario }) => results[scenario.topology.kubeProxy!]!);
}

afterEach(() => {
  vi.mocked(engine.runScenario).mockReset();
});

describe('runGate', () => {
  it('immune under the baseline, susceptible under the candidate: a regression, each side with its reason and deciding probes', async () => {
    byVersion({ '1.14': immune, '1.15': susceptible });
    const r = await runGate([loaded('race')], old, next, {
      provider: {} as ClusterProvider,
      signal: new AbortController().signal,
    });
    expect(r).toMatchObject({ baseline: 'kube-proxy-1.14', candidate: 'kube-proxy-1.15' });
    expect(r.scenarios).toEqual([
      {
        id: 'race',
        baseline: 'immune',
        candidate: 'susceptible',
        change: 'regression',
        baselineReason: 'sym: sym = ok (healthy)',
        candidateReason: 'sym: sym = timeout',
        baselineDecidedBy: ['sym'],
        candidateDecidedBy: ['sym'],
      },
    ]);
  });

  it('a candidate whose fault also breaks a control: broken, a regression', async () => {
    byVersion({ '1.14': immune, '1.15': broken });
    const [row] = (
      await runGate([loaded('race')], old, next, {
        provider: {} as ClusterProvider,
        signal: new AbortController().signal,
      })
    ).scenarios;
    expect(row).toMatchObject({
      baseline: 'immune',
      candidate: 'broken',
      change: 'regression',
      candidateDecidedBy: ['ctl'],
    });
  });

  it("each run is fault-only, quiet, with the profile applied and the scenario's file", async () => {
    byVersion({ '1.14': immune, '1.15': immune });
    const provider = {} as ClusterProvider;
    const signal = new AbortController().signal;
    await runGate([loaded('race')], old, next, { provider, signal });
    const calls = vi.mocked(engine.runScenario).mock.calls;
    expect(
      calls.map(([s, o]) => [
        s.file,
        s.scenario.topology.kubeProxy,
        s.scenario.topology.nodes[0]!.sysctls,
        o.faultOnly,
        o.provider,
        o.signal,
      ]),
    ).toEqual([
      ['race.yaml', '1.14', {}, true, provider, signal],
      ['race.yaml', '1.15', { 'net.netfilter.nf_conntrack_tcp_be_liberal': 1 }, true, provider, signal],
    ]);
    expect(calls[0]![1].emit({ kind: 'scenario-start', id: 'race', title: 't' })).toBeUndefined();
  });

  it('a measurement is not applicable, and not run', async () => {
    byVersion({});
    const [row] = (
      await runGate([loaded('rate', 'measure')], old, next, {
        provider: {} as ClusterProvider,
        signal: new AbortController().signal,
      })
    ).scenarios;
    expect(row).toEqual({
      id: 'rate',
      baseline: 'not-applicable',
      candidate: 'not-applicable',
      change: 'unchanged',
      baselineReason: 'a measurement: its faulted phase reports a rate and asserts no symptom',
      candidateReason: 'a measurement: its faulted phase reports a rate and asserts no symptom',
      baselineDecidedBy: [],
      candidateDecidedBy: [],
    });
    expect(engine.runScenario).not.toHaveBeenCalled();
  });

  it('a replay is not applicable, and not run: its captured state is the same under every profile', async () => {
    byVersion({});
    const [row] = (
      await runGate([loaded('captured', 'replay')], old, next, {
        provider: {} as ClusterProvider,
        signal: new AbortController().signal,
      })
    ).scenarios;
    expect(row).toMatchObject({
      id: 'captured',
      baseline: 'not-applicable',
      candidate: 'not-applicable',
      change: 'unchanged',
      baselineReason: 'a replay: its captured state is the fault, the same under every profile',
      candidateReason: 'a replay: its captured state is the fault, the same under every profile',
    });
    expect(engine.runScenario).not.toHaveBeenCalled();
  });

  it('a provider per profile is made once per profile and used for its runs', async () => {
    byVersion({ '1.14': immune, '1.15': susceptible });
    const made: string[] = [];
    const providers = new Map<string, ClusterProvider>();
    const provider = async (p: Profile) => {
      made.push(p.name);
      const made1 = { name: p.name } as unknown as ClusterProvider;
      providers.set(p.name, made1);
      return made1;
    };
    await runGate([loaded('a'), loaded('b')], old, next, {
      provider,
      signal: new AbortController().signal,
      parallel: 2,
    });
    expect(made.sort()).toEqual(['kube-proxy-1.14', 'kube-proxy-1.15']);
    for (const [s, o] of vi.mocked(engine.runScenario).mock.calls)
      expect(o.provider).toBe(
        providers.get(s.scenario.topology.kubeProxy === '1.14' ? 'kube-proxy-1.14' : 'kube-proxy-1.15'),
      );
  });

  it("onAssessed hears each profile's assessment of each scenario", async () => {
    byVersion({ '1.14': immune, '1.15': susceptible });
    const heard: string[] = [];
    await runGate([loaded('race')], old, next, {
      provider: {} as ClusterProvider,
      signal: new AbortController().signal,
      onAssessed: (profile, id, a) => heard.push(`${profile} ${id} ${a.verdict}`),
    });
    expect(heard).toEqual(['kube-proxy-1.14 race immune', 'kube-proxy-1.15 race susceptible']);
  });

  it('rows in the scenarios\' order; what an abort kept from running is "not run (interrupted)"', async () => {
    const controller = new AbortController();
    vi.mocked(engine.runScenario).mockImplementation(async () => {
      controller.abort();
      return immune;
    });
    const r = await runGate([loaded('a'), loaded('b')], old, next, {
      provider: {} as ClusterProvider,
      signal: controller.signal,
    });
    expect(r.scenarios.map((s) => [s.id, s.baseline, s.candidate, s.candidateReason])).toEqual([
      ['a', 'immune', 'not-applicable', 'not run (interrupted)'],
      ['b', 'not-applicable', 'not-applicable', 'not run (interrupted)'],
    ]);
    expect(r.scenarios[1]).toMatchObject({
      baselineReason: 'not run (interrupted)',
      baselineDecidedBy: [],
      candidateDecidedBy: [],
    });
  });

  it('its duration is the time between its start and its end, in whole ms', async () => {
    byVersion({});
    const now = vi.spyOn(performance, 'now').mockReturnValueOnce(10.4).mockReturnValueOnce(1010.9);
    try {
      expect(
        (await runGate([], old, next, { provider: {} as ClusterProvider, signal: new AbortController().signal }))
          .durationMs,
      ).toBe(1001);
    } finally {
      now.mockRestore();
    }
  });
});
