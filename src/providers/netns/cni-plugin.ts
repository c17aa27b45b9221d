// Calls the real CNI plugins (Debian's containernetworking-plugins) the way a kubelet's runtime
// does: the CNI_* environment, the network config on stdin, the result JSON on stdout.
import { HarnessError } from '../../model/errors.ts';
import type { CommandRunner } from '../../contract/command.ts';

export const CNI_PATH = '/usr/lib/cni';

export interface CniInvocation {
  command: 'ADD' | 'DEL';
  /** netns the plugin runs in: the node's, as the kubelet's would. */
  nodeNetnsPath: string;
  podNetnsPath: string;
  containerId: string;
  ifName: string;
  config: Record<string, unknown>;
  /** The lab's command runner. */
  commands: CommandRunner;
}

export interface CniResult {
  cniVersion: string;
  interfaces?: { name: string; mac?: string; sandbox?: string }[];
  ips?: { address: string; gateway?: string; interface?: number }[];
}

export async function invokeCni(call: CniInvocation): Promise<CniResult> {
  const type = String(call.config.type);
  const result = await call.commands.exec([`${CNI_PATH}/${type}`], {
    enter: { net: call.nodeNetnsPath },
    input: JSON.stringify(call.config),
    reject: false,
    timeoutMs: 10_000,
    env: {
      CNI_COMMAND: call.command,
      CNI_CONTAINERID: call.containerId,
      CNI_NETNS: call.podNetnsPath,
      CNI_IFNAME: call.ifName,
      CNI_PATH,
      PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin',
    },
  });
  if (result.exitCode !== 0) {
    // CNI errors come back as JSON on stdout: {"code":..,"msg":..,"details":..}
    let message = result.stdout.trim() || result.stderr.trim();
    try {
      const e = JSON.parse(result.stdout) as { msg?: string; details?: string };
      message = [e.msg, e.details].filter(Boolean).join(': ');
    } catch {}
    throw new HarnessError(
      'LAB_FAILED',
      `CNI ${type} ${call.command} for ${call.containerId} failed: ${message}`,
      'check that containernetworking-plugins is installed (npm run preflight)',
    );
  }
  return call.command === 'ADD'
    ? (JSON.parse(result.stdout) as CniResult)
    : { cniVersion: String(call.config.cniVersion) };
}
