// Captured packets for the classification tests, written as tcpdump prints them (addresses as
// IP.PORT) and parsed the way a probe's packet watch parses them.
import { parseTcpdumpLine, type Packet } from '../../../src/observe/probes/packet-watch.ts';

/** The probing pod, its ephemeral port, the Service it connects to and the pod behind it. */
export const client = '10.244.1.2';
export const vip = { ip: '10.96.0.20', port: 80 };
export const pod = { ip: '10.244.1.3', port: 8080 };

export const tcp = (from: string, to: string, flags: string) =>
  `12:00:00.000001 IP ${from} > ${to}: Flags [${flags}], seq 1, win 64240, length 0`;
export const udp = (from: string, to: string) =>
  `12:00:00.000001 IP ${from} > ${to}: 7766+ A? web.default.svc.cluster.local. (47)`;
export const icmp = (from: string, to: string, text: string) =>
  `12:00:00.000001 IP ${from} > ${to}: ICMP ${text}, length 68`;

/** The client's SYN to the Service, from port 44186. */
export const SYN = tcp('10.244.1.2.44186', '10.96.0.20.80', 'S');

export function wire(...lines: string[]): Packet[] {
  return lines.map((line) => {
    const p = parseTcpdumpLine(line);
    if (!p) throw new Error(`not a packet line: ${line}`);
    return p;
  });
}
