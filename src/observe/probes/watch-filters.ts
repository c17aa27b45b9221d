// What each probe kind's packet watch captures on the client's interface (tcpdump filter words). One
// place, so that a phase can start its probes' watches ahead (ahead-watches.ts) with the filter each
// runner then asks for.
import { probeKindOf } from '../../model/probes/registry.ts';
import type { ProbeSpec } from '../../model/scenario-schema.ts';
import { SOURCE_PORTS } from './source-ports.ts';

/** HTTP: every TCP segment and ICMP error (an unreachable or a port-unreachable is what the application experienced). */
export const HTTP_WATCH = ['tcp', 'or', 'icmp'];

/** DNS: the queries and replies, and ICMP about them. */
export const DNS_WATCH = ['(udp', 'port', '53)', 'or', 'icmp'];

/**
 * UDP: the datagrams of the probe's source port (its fixed one, or the range each run takes a fresh one from:
 * so not the VXLAN or other UDP traffic a node carries), whoever sent them, and ICMP about them.
 */
export function udpWatch(sourcePort: number | undefined): string[] {
  const ports = sourcePort ? ['port', String(sourcePort)] : ['portrange', `${SOURCE_PORTS.first}-${SOURCE_PORTS.last}`];
  return ['(udp', 'and', ...ports, ')', 'or', 'icmp'];
}

/** A download: not the data stream, only the handshake, RSTs, ICMP, and segments from an address the client never contacted. */
export function downloadWatch(client: string, endpointIp: string): string[] {
  return [
    '-S',
    `icmp or (tcp and ((dst host ${client} and not src host ${endpointIp}) or (tcp[tcpflags] & (tcp-rst|tcp-syn) != 0)))`,
  ];
}

/** The filter a probe's runner watches with. */
export function watchFilter(spec: ProbeSpec, client: string, endpointIp: string): string[] {
  const [kind] = probeKindOf(spec);
  if (kind === 'http') return HTTP_WATCH;
  if (kind === 'dns') return DNS_WATCH;
  if (kind === 'udp') return udpWatch(spec.udp?.sourcePort);
  return downloadWatch(client, endpointIp);
}
