// `http: {to, port, path}`: curl of one URL; the HTTP echo names the pod that answered.
import { z } from 'zod';
import { Port, ProbeTarget } from '../primitives.ts';
import { defineProbe } from './probe-kind.ts';

export const httpProbe = defineProbe({
  key: 'http',
  description: 'curl GET of one URL; ok with HTTP 2xx/3xx, the answering pod named',
  schema: z
    .object({
      to: ProbeTarget,
      port: Port,
      path: z
        .string()
        .regex(/^\/[\x21-\x7e]*$/, 'an absolute URL path')
        .default('/')
        .describe('the URL path requested'),
    })
    .strict(),
  destination: (s) => ({ ref: s.to, port: s.port, field: 'to' }),
});
