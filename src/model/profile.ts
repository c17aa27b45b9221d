// A profile is a named environment a scenario runs under: kube-proxy behaviour by version, node
// sysctls set before the components start, Cilium options; for real providers also the versions
// of Kubernetes and the CNI. Applying a profile rewrites a scenario's topology, nothing else.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { packagePath } from './package-root.ts';
import { HarnessError } from './errors.ts';
import { parseValidated } from './load-scenario.ts';
import { CILIUM_VERSIONS, KubeProxyVersion, type Scenario, type TopologySpec } from './scenario-schema.ts';

export const PROFILE_DIR = packagePath('profiles');

export const ProfileSchema = z
  .object({
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9.-]{0,62}$/, 'lower-case letters, digits, "." and "-" (the file name without .yaml)'),
    description: z.string().min(1),
    kubeProxy: KubeProxyVersion.optional().describe(
      'kube-proxy release whose rule layout the lab writes (overrides the scenario)',
    ),
    nodeSysctls: z
      .record(z.string().regex(/^net\.[a-z0-9_.-]+$/, 'a net.* sysctl'), z.union([z.string(), z.number()]))
      .default({})
      .describe('set on every node before kube-proxy and Cilium start (kube-proxy >= 1.29 reads be_liberal then)'),
    cilium: z
      .object({
        bpfMasquerade: z.boolean().optional(),
        socketLB: z.boolean().optional(),
        version: z.enum(CILIUM_VERSIONS).optional(),
        endpointRoutes: z.boolean().optional(),
      })
      .strict()
      .optional()
      .describe('Cilium options (overrides the scenario); version picks the CILIUM_FORWARD rules'),
    real: z
      .object({
        kubernetesVersion: z.string().optional(),
        ciliumChart: z.string().optional(),
        flannel: z.string().optional(),
      })
      .strict()
      .optional()
      .describe('versions for kind/minikube/k3s; the netns lab ignores them'),
  })
  .strict();

export type Profile = z.output<typeof ProfileSchema>;

/** `name` is a file in profiles/ (without .yaml) or a path to a YAML file. */
export async function loadProfile(name: string): Promise<Profile> {
  const file = /\.ya?ml$/.test(name) ? name : join(PROFILE_DIR, `${name}.yaml`);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new HarnessError('USAGE', `no profile ${name} (${file})`, `profiles are files in profiles/: ${PROFILE_DIR}`);
  }
  const profile = parseValidated(ProfileSchema, text, file).data;
  if (!/\.ya?ml$/.test(name) && profile.name !== name) {
    throw new HarnessError(
      'SCENARIO_INVALID',
      `${file}:1:1: name: must match the file name (received ${profile.name}, expected ${name})`,
    );
  }
  return profile;
}

export function applyProfile(scenario: Scenario, profile: Profile): Scenario {
  return { ...scenario, topology: profiledTopology(scenario.topology, profile) };
}

/** The topology as `profile` makes it: its kube-proxy release, node sysctls and Cilium options. */
export function profiledTopology(t: TopologySpec, profile: Profile): TopologySpec {
  return {
    ...t,
    kubeProxy: profile.kubeProxy ?? t.kubeProxy,
    nodes: t.nodes.map((n) => ({ ...n, sysctls: { ...n.sysctls, ...profile.nodeSysctls } })),
    cilium: { ...t.cilium, ...profile.cilium },
  };
}
