// What a real cluster cannot do with a scenario's Services, read from the file before anything is created,
// so the scenario is skipped up front rather than at the step (after its clusters were built, with a
// baseline that already misread the cluster): an endpoint changes only through the label its Service selects
// on (no readiness or termination set by hand), and internalTrafficPolicy is honoured from 1.22 on.
import type { Misfit } from '../../../contract/provider.ts';
import { placedSteps } from '../../../model/placed-steps.ts';
import type { Scenario } from '../../../model/scenario-schema.ts';
import { kubeProxyLayout } from '../../../dataplane/kube-proxy-layout.ts';
import { releaseMinor } from './kube-proxy-stand-in.ts';

const HINT = 'run it with --provider netns';

export function fitServiceSteps(scenario: Scenario, k8sVersion: string, provider: string): Misfit | undefined {
  const minor = releaseMinor(k8sVersion);
  const honoursItp = minor !== undefined && kubeProxyLayout(`1.${minor}`).internalTrafficPolicy;
  const local = scenario.topology.services.find((s) => s.internalTrafficPolicy === 'Local');
  if (local && !honoursItp)
    return {
      reason: `service ${local.name} has internalTrafficPolicy Local, which kube-proxy honours from Kubernetes v1.22 on; the cluster runs ${k8sVersion}`,
      hint: HINT,
    };
  const headless = new Set(scenario.topology.services.filter((s) => s.clusterIP === 'None').map((s) => s.name));
  for (const { where, step } of placedSteps(scenario)) {
    const changed = 'endpoint' in step ? step.endpoint?.service : 'service' in step ? step.service?.name : undefined;
    if (changed !== undefined && headless.has(changed))
      return {
        reason: `${where} changes headless service ${changed}: the pod image's DNS program takes its records when it starts, so the change would not show in its answers`,
        hint: HINT,
      };
    if ('endpoint' in step && step.endpoint) {
      const e = step.endpoint;
      if (e.op === 'set' || e.ready === false || e.terminating)
        return {
          reason: `${where} (endpoint ${e.op}${e.ready === false ? ' ready=false' : ''}${e.terminating ? ' terminating' : ''}): ${provider} changes endpoints by the pod's label only (no readiness or termination by hand)`,
          hint: HINT,
        };
    } else if ('service' in step && step.service?.internalTrafficPolicy !== undefined && !honoursItp)
      return {
        reason: `${where} (service): internalTrafficPolicy is honoured from Kubernetes v1.22 on; the cluster runs ${k8sVersion}`,
        hint: HINT,
      };
  }
  return undefined;
}
