// `dns: {server, name, tool, sourcePort}`: one A query, by our resolver (reads every reply's source)
// or BIND's nslookup (a connected socket, as most clients use).
import { z } from 'zod';
import { Port, Ref } from '../primitives.ts';
import { defineProbe } from './probe-kind.ts';

export const dnsProbe = defineProbe({
  key: 'dns',
  description: 'one DNS A query to port 53 of a server; the answer section can be compared with `answer:`',
  schema: z
    .object({
      server: Ref,
      name: z
        .string()
        .regex(/^[a-z0-9.-]+$/, 'a DNS name')
        .describe('the name looked up'),
      tool: z.enum(['agent', 'nslookup']).default('agent').describe('agent reads the reply source; nslookup is BIND'),
      sourcePort: Port.optional().describe(
        'agent only: send from this UDP port every time (a resolver or statsd client reusing its socket: one conntrack entry for every query)',
      ),
    })
    .refine((d) => d.sourcePort === undefined || d.tool === 'agent', 'sourcePort needs tool: agent')
    .strict(),
  destination: (s) => ({ ref: s.server, port: 53, field: 'server' }),
  runsAgent: (s) => s.tool === 'agent',
});
