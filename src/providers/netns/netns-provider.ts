// The embedded provider: a real Linux dataplane in network namespaces on this host.
import { readFileSync } from 'node:fs';
import { access, constants } from 'node:fs/promises';
import { packagePath } from '../../model/package-root.ts';
import type { TopologySpec } from '../../model/scenario-schema.ts';
import type { Availability, ClusterProvider, Misfit, RunContext, StartedCluster } from '../../contract/provider.ts';
import { cleanLeftovers, liveRuns } from './clean-leftovers.ts';
import { NETNS_SUPPORT } from './netns-support.ts';
import { provisionNetnsLab } from './provision-netns-lab.ts';
import { findOnPath } from '../../contract/find-on-path.ts';

const requirements = JSON.parse(readFileSync(packagePath('src/providers/netns/lab-requirements.json'), 'utf8')) as {
  commands: Record<string, string>;
  files: Record<string, string>;
};

export async function netnsAvailability(): Promise<Availability> {
  if (process.platform !== 'linux')
    return {
      ok: false,
      reason: 'the netns lab needs Linux network namespaces',
      hint: 'run on Linux, or use --provider kind',
    };
  if (process.getuid?.() !== 0)
    return {
      ok: false,
      reason: 'the netns lab needs root (it creates network namespaces)',
      hint: 'run as root, e.g. sudo node bin/netrepro.js run ...',
    };
  const missing: string[] = [];
  for (const [command, pkg] of Object.entries(requirements.commands))
    if (!(await findOnPath(command))) missing.push(`${command} (${pkg})`);
  for (const [file, pkg] of Object.entries(requirements.files)) {
    try {
      await access(file, constants.F_OK);
    } catch {
      missing.push(`${file} (${pkg})`);
    }
  }
  if (missing.length > 0)
    return {
      ok: false,
      reason: `missing: ${missing.join(', ')}`,
      hint: 'npm run preflight installs them (Debian/Ubuntu)',
    };
  return { ok: true };
}

export class NetnsProvider implements ClusterProvider {
  readonly name = 'netns' as const;
  readonly capabilities = NETNS_SUPPORT.capabilities;

  fit(topology: TopologySpec): Misfit | undefined {
    return NETNS_SUPPORT.fit(topology);
  }

  reap(options: { force: boolean }): Promise<string[]> {
    return cleanLeftovers(options);
  }

  liveRuns(): Promise<string[]> {
    return liveRuns();
  }

  detect(): Promise<Availability> {
    return netnsAvailability();
  }

  provision(topology: TopologySpec, run: RunContext): Promise<StartedCluster> {
    return provisionNetnsLab(topology, run);
  }
}
