// A real cluster's Service limits are read from the file: internalTrafficPolicy before 1.22, and endpoint
// readiness or termination set by hand, skip the scenario before any cluster is built.
import { expect, it } from 'vitest';
import { loadScenarioFile } from '../../src/model/load-scenario.ts';
import { fitServiceSteps } from '../../src/providers/real/common/fit-service-steps.ts';

const load = async (file: string) => (await loadScenarioFile(file)).scenario;

it('refuses a topology Service with internalTrafficPolicy Local before 1.22', async () => {
  const s = await load('scenarios/clusterip-local-policy-no-local-endpoint.yaml');
  expect(fitServiceSteps(s, 'v1.20.2', 'local')?.reason).toMatch(
    /^service collector has internalTrafficPolicy Local, .*from Kubernetes v1\.22 on; the cluster runs v1\.20\.2$/,
  );
});

it('refuses an endpoint step that sets readiness by hand, wherever the release', async () => {
  const s = await load('scenarios/clusterip-local-policy-no-local-endpoint.yaml');
  expect(fitServiceSteps(s, 'v1.35.1', 'kind')?.reason).toBe(
    "fault, step 2 (endpoint add ready=false): kind changes endpoints by the pod's label only (no readiness or termination by hand)",
  );
});

it('refuses a service step that sets internalTrafficPolicy before 1.22 only', async () => {
  const s = await load('scenarios/clusterip-local-policy-no-local-endpoint.yaml');
  const noLocal = {
    ...s,
    topology: {
      ...s.topology,
      services: s.topology.services.map((v) => ({ ...v, internalTrafficPolicy: 'Cluster' as const })),
    },
    fault: { ...s.fault, steps: [] },
    fixes: s.fixes.filter((f) => f.name === 'policy-cluster'),
  };
  expect(fitServiceSteps(noLocal, 'v1.20.2', 'local')?.reason).toMatch(
    /^fix policy-cluster, step 1 \(service\): internalTrafficPolicy/,
  );
  expect(fitServiceSteps(noLocal, 'v1.22.0', 'kind')).toBeUndefined();
});

it('lets label-only endpoint changes through', async () => {
  expect(
    fitServiceSteps(await load('scenarios/upstream-e2e/rejected-no-endpoints.yaml'), 'v1.20.2', 'local'),
  ).toBeUndefined();
});
