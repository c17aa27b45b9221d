// The embedded provider: a real Linux dataplane in network namespaces on this host.
import { access, constants } from 'node:fs/promises';
import type { TopologySpec } from '../../harness/model/scenario-schema.ts';
import type { Availability, ClusterProvider, RunContext, StartedCluster } from '../provider.ts';
import { CNI_PATH } from './cni-plugin.ts';
import { provisionNetnsLab } from './provision-netns-lab.ts';

/** Programs the lab runs, and the Debian package that ships each. */
export const LAB_COMMANDS: Record<string, string> = {
  ip: 'iproute2',
  nsenter: 'util-linux',
  'iptables-restore': 'iptables',
  'iptables-save': 'iptables',
  conntrack: 'conntrack',
  tcpdump: 'tcpdump',
  curl: 'curl',
  nslookup: 'dnsutils',
  sysctl: 'procps',
};
const CNI_PLUGINS = ['bridge', 'host-local', 'loopback'];

export async function findOnPath(command: string): Promise<boolean> {
  const dirs = (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/sbin']);
  for (const dir of dirs) {
    try {
      await access(`${dir}/${command}`, constants.X_OK);
      return true;
    } catch {}
  }
  return false;
}

export async function netnsAvailability(): Promise<Availability> {
  if (process.platform !== 'linux') return { ok: false, reason: 'the netns lab needs Linux network namespaces', hint: 'run on Linux, or use --provider kind' };
  if (process.getuid?.() !== 0) return { ok: false, reason: 'the netns lab needs root (it creates network namespaces)', hint: 'run as root, e.g. sudo npx netrepro run ...' };
  const missing: string[] = [];
  for (const [command, pkg] of Object.entries(LAB_COMMANDS)) if (!(await findOnPath(command))) missing.push(`${command} (${pkg})`);
  for (const plugin of CNI_PLUGINS) {
    try {
      await access(`${CNI_PATH}/${plugin}`, constants.X_OK);
    } catch {
      missing.push(`${CNI_PATH}/${plugin} (containernetworking-plugins)`);
    }
  }
  if (missing.length > 0) return { ok: false, reason: `missing: ${missing.join(', ')}`, hint: 'npm run preflight installs them (Debian/Ubuntu)' };
  return { ok: true };
}

export class NetnsProvider implements ClusterProvider {
  readonly name = 'netns' as const;

  detect(): Promise<Availability> {
    return netnsAvailability();
  }

  provision(topology: TopologySpec, run: RunContext): Promise<StartedCluster> {
    return provisionNetnsLab(topology, run);
  }
}
