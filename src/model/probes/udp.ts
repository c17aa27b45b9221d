// `udp: {to, port, sourcePort}`: one datagram to any UDP port by the pod agent, which reads the source of
// every reply; the agent's UDP server answers with its name and the client address it saw.
import { z } from 'zod';
import { Port, ProbeTarget } from '../primitives.ts';
import { defineProbe } from './probe-kind.ts';

export const udpProbe = defineProbe({
  key: 'udp',
  description:
    'one UDP datagram to a port; ok when the server answers, the answering pod and the client address it saw named',
  schema: z
    .object({
      to: ProbeTarget,
      port: Port,
      sourcePort: Port.optional().describe(
        'send from this UDP port every time (a client reusing its socket, `nc -u -p`: one conntrack entry for every run)',
      ),
    })
    .strict(),
  destination: (s) => ({ ref: s.to, port: s.port, field: 'to' }),
  runsAgent: () => true,
});
