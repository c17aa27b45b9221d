// Lab tests need root and network namespaces. Where the lab cannot run they are skipped with the
// reason; under CI (CI=true) they must run, so an unusable environment fails instead of skipping.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { netnsAvailability } from '../src/providers/netns/netns-provider.ts';
import { parseScenario } from '../src/model/load-scenario.ts';
import type { TopologySpec } from '../src/model/scenario-schema.ts';

/** A temporary directory (e.g. for evidence: pcaps of MBs) removed when the test ends, pass or fail. */
export async function tempDir(prefix = 'netrepro-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const availability = await netnsAvailability();

export const labSkipReason: string | undefined = availability.ok
  ? undefined
  : `${availability.reason} (${availability.hint})`;

if (labSkipReason && process.env.CI === 'true') {
  throw new Error(`CI=true but the netns lab cannot run here: ${labSkipReason}`);
}
if (labSkipReason) console.warn(`netns lab tests skipped: ${labSkipReason}`);

/**
 * A topology for a lab test, written as the YAML lines under `topology:` (indented two spaces). The rest
 * of the scenario it is parsed in (one probe, no-op fault and fix, each expecting something the phase
 * before does not, as validation requires) only makes it valid; it never runs.
 */
export function labTopology(
  body: string,
  probe = '{ id: p, from: client, http: { to: svc/web, port: 80 } }',
): TopologySpec {
  const scenario = `id: t
title: t
topology:
${body.replace(/^\n+|\n+$/g, '')}
probes: [${probe}]
baseline: { expect: { p: ok } }
fault: { steps: [{ run: { on: node/a, cmd: "true" } }], expect: { p: timeout } }
fixes: [{ steps: [{ run: { on: node/a, cmd: "true" } }], expect: { p: ok } }]
`;
  return parseScenario(scenario, 't.yaml').topology;
}

/**
 * The lab tests' small topology: one bridge node, a client, a DNS pod behind the ClusterIP 10.96.0.10
 * (and a web pod serving 8080 when asked), on the given kube-proxy release.
 */
export function dnsServiceTopology(options: { kubeProxy?: string; web?: boolean } = {}): TopologySpec {
  return labTopology(
    `
  cni: bridge
${options.kubeProxy ? `  kubeProxy: "${options.kubeProxy}"\n` : ''}  nodes: [{ name: a, podCIDR: 10.244.1.0/24 }]
  pods:
    - { name: client, node: a }
${options.web ? '    - { name: web, node: a, serve: [{ http: 8080 }] }\n' : ''}    - { name: dns, node: a, serve: [{ dns: 53 }] }
  services:
    - { name: dns, clusterIP: 10.96.0.10, ports: [{ port: 53, targetPort: 53, protocol: UDP }], endpoints: [dns] }`,
    '{ id: p, from: client, dns: { server: svc/dns, name: dns.default.svc.cluster.local } }',
  );
}
