// What a real cluster's `start` and `reboot` steps can be, read from the file before anything is created, so
// a scenario none of whose variants could run is skipped up front, not at a step deep in a run (a refused step
// skips the whole scenario). Each variant's steps are followed in order with each node's be_liberal:
// - `start` kube-proxy (at a version, or the profile's) needs the cluster's kube-proxy to stand for that
//   release with be_liberal as it then is (kube-proxy-stand-in.ts);
// - `reboot` restarts the node's machine: the sysctls of the topology are set again, but one a step set
//   earlier is gone, where the lab's reboot (its rules and conntrack emptied) keeps it.
import type { Misfit } from '../../../contract/provider.ts';
import { placedSteps } from '../../../model/placed-steps.ts';
import type { Scenario } from '../../../model/scenario-schema.ts';
import type { StepSpec } from '../../../model/steps/registry.ts';
import { standInRefusal } from '../common/kube-proxy-stand-in.ts';

const BE_LIBERAL = 'net.netfilter.nf_conntrack_tcp_be_liberal';

export function fitComponentSteps(scenario: Scenario, k8sVersion: string): Misfit | undefined {
  const { topology } = scenario;
  const atBoot = (node: string) =>
    String(topology.nodes.find((n) => n.name === node)?.sysctls?.[BE_LIBERAL] ?? '0') !== '0';
  const services = topology.services.length > 0;
  for (const fix of scenario.fixes) {
    const phases: [string, StepSpec[]][] = [
      ['baseline', (scenario.baseline as { steps?: StepSpec[] }).steps ?? []],
      ['fault', scenario.fault.steps ?? []],
      [`fix ${fix.name}`, fix.steps ?? []],
    ];
    const liberal = new Map(topology.nodes.map((n) => [n.name, atBoot(n.name)]));
    const setBy = new Map<string, string>();
    for (const [phase, steps] of phases)
      for (const [i, step] of steps.entries()) {
        const where = `${phase}, step ${i + 1}`;
        if ('sysctl' in step && step.sysctl && step.sysctl.on.startsWith('node/')) {
          const node = step.sysctl.on.slice(5);
          setBy.set(node, `${where} (sysctl ${step.sysctl.name})`);
          if (step.sysctl.name === BE_LIBERAL) liberal.set(node, String(step.sysctl.value) !== '0');
        } else if ('reboot' in step && step.reboot) {
          const set = setBy.get(step.reboot.node);
          if (set)
            return {
              reason: `${where} (reboot) restarts node ${step.reboot.node}'s machine, which loses what ${set} set`,
              hint: 'run it with --provider netns, whose reboot keeps the sysctls',
            };
          liberal.set(step.reboot.node, atBoot(step.reboot.node));
        } else if ('start' in step && step.start && step.start.component === 'kube-proxy') {
          if (step.start.clusterCIDR !== undefined || step.start.masqueradeAll !== undefined)
            return {
              reason: `${where} (start): the cluster's kube-proxy takes its configuration from its ConfigMap, which netrepro does not change`,
              hint: 'run it with --provider netns or local',
            };
          const asked = step.start.version ?? topology.kubeProxy;
          const refusal = standInRefusal(asked, k8sVersion, {
            beLiberal: liberal.get(step.start.node) ?? false,
            services,
          });
          if (refusal)
            return {
              reason: `${where} (start): the cluster's kube-proxy cannot start as ${asked}: ${refusal}`,
              hint: 'run it with --provider netns, or on a cluster of that release (NETREPRO_K8S_VERSION)',
            };
        }
      }
  }
  return undefined;
}

/**
 * The scenario's first `start` or `reboot` step, refused with `why`, for a cluster whose node components run
 * inside one process (no pod to start anew, nothing to hold off a restarting node).
 */
export function fitEmbeddedComponents(scenario: Scenario, why: string): Misfit | undefined {
  for (const { where, step } of placedSteps(scenario)) {
    const kind = 'start' in step && step.start ? 'start' : 'reboot' in step && step.reboot ? 'reboot' : undefined;
    if (kind) return { reason: `${where} (${kind}): ${why}`, hint: 'run it with --provider kind or minikube' };
  }
  return undefined;
}
