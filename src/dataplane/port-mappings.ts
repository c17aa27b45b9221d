// A pod's hostPorts as a container runtime hands them to the CNI chain: the `portMappings` capability argument
// (runtimeConfig.portMappings), protocols lower-cased as CRI runtimes pass them, and a hostIP as the address it
// names (containerd's CRI plugin passes a container port's hostIP on; portmap then matches `-d HOSTIP`).
import type { TopologySpec } from '../model/scenario-schema.ts';

export interface PortMapping {
  hostPort: number;
  containerPort: number;
  protocol: string;
  hostIP?: string;
}

export function portMappings(pod: TopologySpec['pods'][number], address: (ref: string) => string): PortMapping[] {
  return (pod.hostPorts ?? []).map((h) => ({
    hostPort: h.hostPort,
    containerPort: h.containerPort,
    protocol: h.protocol.toLowerCase(),
    ...(h.hostIP === undefined ? {} : { hostIP: hostIPAddress(h.hostIP, address) }),
  }));
}

/** A hostIP as an address: `node/NAME` is that node's, a literal (the loopback) is itself. */
export const hostIPAddress = (hostIP: string, address: (ref: string) => string) =>
  hostIP.startsWith('node/') ? address(hostIP) : hostIP;
