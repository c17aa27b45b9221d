// What each probe kind's packet watch captures on the client's interface (tcpdump filter words). One
// place, so that a phase can start its probes' watches ahead (ahead-watches.ts) with the filter each
// runner then asks for.
import type { ProbeKindName } from '../../model/probes/registry.ts';

/** HTTP: every TCP segment and ICMP error (an unreachable or a port-unreachable is what the application experienced). */
export const HTTP_WATCH = ['tcp', 'or', 'icmp'];

/** DNS: the queries and replies, and ICMP about them. */
export const DNS_WATCH = ['(udp', 'port', '53)', 'or', 'icmp'];

/** A download: not the data stream, only the handshake, RSTs, ICMP, and segments from an address the client never contacted. */
export function downloadWatch(client: string, endpointIp: string): string[] {
  return [
    '-S',
    `icmp or (tcp and ((dst host ${client} and not src host ${endpointIp}) or (tcp[tcpflags] & (tcp-rst|tcp-syn) != 0)))`,
  ];
}

export function watchFilter(kind: ProbeKindName, client: string, endpointIp: string): string[] {
  return kind === 'http' ? HTTP_WATCH : kind === 'dns' ? DNS_WATCH : downloadWatch(client, endpointIp);
}
