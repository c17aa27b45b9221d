// `download: {to, port, bytes}`: a large HTTP download from the pod agent (GET /bytes/N).
import { z } from 'zod';
import { Port, ProbeTarget } from '../primitives.ts';
import { defineProbe } from './probe-kind.ts';

export const downloadProbe = defineProbe({
  key: 'download',
  description:
    'a large HTTP download from the pod agent; ok only with the full byte count, reset when the connection was reset',
  schema: z
    .object({
      to: ProbeTarget,
      port: Port,
      bytes: z
        .number()
        .int()
        .min(1)
        .max(2 ** 40)
        .describe('size the server streams (GET /bytes/N); ok only if every byte arrived'),
    })
    .strict(),
  destination: (s) => ({ ref: s.to, port: s.port, field: 'to' }),
});
