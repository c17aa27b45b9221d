// kind's start and reboot steps, judged from the file: each variant's steps in order, with each node's
// be_liberal as the steps leave it.
import { describe, expect, it } from 'vitest';
import { loadScenarioFile } from '../../src/model/load-scenario.ts';
import { packagePath } from '../../src/model/package-root.ts';
import type { Scenario } from '../../src/model/scenario-schema.ts';
import { fitComponentSteps } from '../../src/providers/real/containers/fit-component-steps.ts';

const load = async (id: string) => (await loadScenarioFile(packagePath(`scenarios/${id}.yaml`))).scenario;

describe('start and reboot steps on a real cluster, from the file', () => {
  it('fits the FORWARD race on v1.35.1: its 1.29 start follows be_liberal=1, as 1.29 and 1.35 both leave the DROP out then', async () => {
    expect(fitComponentSteps(await load('cilium-kube-proxy-forward-race'), 'v1.35.1')).toBeUndefined();
  });

  it("skips the restart control up front: v1.35.1's kube-proxy cannot start as 1.14", async () => {
    expect(fitComponentSteps(await load('cilium-kube-proxy-restart-no-race'), 'v1.35.1')?.reason).toMatch(
      /^fix kube-proxy-1-14-ipvs-cleanup, step 1 \(start\): the cluster's kube-proxy cannot start as 1\.14: /,
    );
  });

  it('follows be_liberal through the steps: the profile release started after be_liberal=1 does not fit', async () => {
    const race = await load('cilium-kube-proxy-forward-race');
    const fix = race.fixes.find((f) => f.name === 'be-liberal-kube-proxy-1-29')!;
    const withoutVersion = {
      ...fix,
      steps: fix.steps!.map((s) => ('start' in s && s.start ? { start: { ...s.start, version: undefined } } : s)),
    };
    const scenario = { ...race, fixes: [withoutVersion] } as Scenario;
    expect(fitComponentSteps(scenario, 'v1.35.1')?.reason).toMatch(
      /^fix be-liberal-kube-proxy-1-29, step 2 \(start\): .*with nf_conntrack_tcp_be_liberal=1 as it starts, 1\.15 writes the DROP and v1\.35\.1 does not$/,
    );
    // a reboot in between gives the node its boot settings back
    const rebooted = {
      ...withoutVersion,
      steps: [withoutVersion.steps![0]!, { reboot: { node: 'node-a' } }, withoutVersion.steps![1]!],
    };
    expect(fitComponentSteps({ ...race, fixes: [rebooted] } as Scenario, 'v1.35.1')?.reason).toMatch(
      /^fix be-liberal-kube-proxy-1-29, step 2 \(reboot\) restarts node node-a's machine, which loses what fix be-liberal-kube-proxy-1-29, step 1 \(sysctl net\.netfilter\.nf_conntrack_tcp_be_liberal\) set$/,
    );
  });
});
