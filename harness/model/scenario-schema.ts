// The scenario file format: one zod schema is the single source of truth for validation,
// the TypeScript types and the published JSON Schema (scenarios/scenario.schema.json).
import { z } from 'zod';
import { OUTCOMES } from './outcome.ts';

/** Names reach namespace names and command lines: keep them to DNS-label characters. */
export const Name = z
  .string()
  .regex(/^[a-z]([a-z0-9-]{0,30}[a-z0-9])?$/, 'lower-case letters, digits and "-", starting with a letter, at most 32 characters');

/** Scenario ids are contract (reports, CI): longer than names, never used in interface or namespace names. */
export const ScenarioId = z.string().regex(/^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/, 'lower-case letters, digits and "-", at most 63 characters');
const Ipv4 = z.ipv4({ message: 'an IPv4 address such as 10.96.0.10' });
const Cidr = z.cidrv4({ message: 'an IPv4 CIDR such as 10.244.1.0/24' });
const Port = z.number().int().min(1).max(65535);
const Duration = z
  .union([z.number().positive(), z.string().regex(/^\d+(\.\d+)?(ms|s)$/, 'a duration such as 800ms or 1s')])
  .describe('milliseconds as a number, or a string such as 800ms / 1.5s');
/** A reference to something with an address: pod/NAME, svc/NAME or node/NAME. */
export const Ref = z.string().regex(/^(pod|svc|node)\/[a-z][a-z0-9-]*$/, 'pod/NAME, svc/NAME or node/NAME');
/** Where a step runs: a node or a pod. */
export const TargetRef = z.string().regex(/^(pod|node)\/[a-z][a-z0-9-]*$/, 'pod/NAME or node/NAME');

export const CNI_SHAPES = ['bridge'] as const;
export const KUBE_PROXY_VERSIONS = ['1.14', '1.15', '1.29'] as const;

const Program = z
  .object({
    http: Port.optional().describe('HTTP echo server on this port; it answers with its pod name'),
    dns: Port.optional().describe('DNS server on this UDP port answering <svc>.<ns>.svc.cluster.local for every service'),
  })
  .strict()
  .refine((p) => Object.keys(p).length === 1, 'one program per entry: http or dns');

const Node = z
  .object({
    name: Name,
    podCIDR: Cidr.describe('pod subnet of this node, handed to host-local IPAM'),
    sysctls: z.record(z.string().regex(/^net\.[a-z0-9_.-]+$/, 'a net.* sysctl'), z.union([z.string(), z.number()])).optional()
      .describe('extra sysctls set in the node namespace at provisioning'),
  })
  .strict();

const Pod = z
  .object({
    name: Name,
    node: Name,
    serve: z.array(Program).optional().describe('programs started in the pod'),
  })
  .strict();

const ServicePort = z
  .object({
    name: Name.optional(),
    port: Port,
    targetPort: Port,
    protocol: z.enum(['TCP', 'UDP']).default('TCP'),
  })
  .strict();

const Service = z
  .object({
    name: Name,
    namespace: Name.default('default'),
    clusterIP: Ipv4,
    ports: z.array(ServicePort).min(1),
    endpoints: z.array(Name).describe('pod names backing the service, in EndpointSlice order'),
  })
  .strict();

export const Topology = z
  .object({
    cni: z.enum(CNI_SHAPES),
    kubeProxy: z.enum(KUBE_PROXY_VERSIONS).default('1.29').describe('kube-proxy iptables-mode rule layout by version'),
    clusterCIDR: Cidr.default('10.244.0.0/16'),
    nodes: z.array(Node).min(1),
    pods: z.array(Pod).min(1),
    services: z.array(Service).default([]),
  })
  .strict();

const HttpProbe = z
  .object({ to: Ref, port: Port, path: z.string().regex(/^\/[\x21-\x7e]*$/, 'an absolute URL path').default('/') })
  .strict();
const DnsProbe = z
  .object({
    server: Ref,
    name: z.string().regex(/^[a-z0-9.-]+$/, 'a DNS name'),
    tool: z.enum(['agent', 'nslookup']).default('agent').describe('agent reads the reply source; nslookup is BIND'),
  })
  .strict();

export const Probe = z
  .object({
    id: Name,
    from: Name.describe('pod the probe runs in'),
    timeout: Duration.default(1000).describe('verdict deadline; a hang is called after this'),
    http: HttpProbe.optional(),
    dns: DnsProbe.optional(),
  })
  .strict()
  .refine((p) => [p.http, p.dns].filter(Boolean).length === 1, 'a probe has exactly one kind: http or dns');

const RunStep = z
  .object({
    on: TargetRef,
    cmd: z.union([z.string().min(1), z.array(z.string()).min(1)]).describe('argv, or a string split on spaces with quotes; no shell'),
  })
  .strict();
const SysctlStep = z.object({ on: TargetRef, name: z.string().regex(/^net\.[a-z0-9_.-]+$/), value: z.union([z.string(), z.number()]) }).strict();
const BrNetfilterStep = z.object({ node: Name, enabled: z.boolean() }).strict();

export const Step = z
  .object({
    run: RunStep.optional(),
    sysctl: SysctlStep.optional(),
    'br-netfilter': BrNetfilterStep.optional().describe('net.bridge.bridge-nf-call-iptables on a node: the module loaded or not'),
  })
  .strict()
  .refine((s) => Object.keys(s).length === 1, 'each step has exactly one action');

const Expected = z.union([
  z.enum(OUTCOMES),
  z
    .object({
      outcome: z.enum(OUTCOMES),
      servedBy: Name.optional().describe('the pod that must have answered'),
      source: Ref.optional().describe('the unexpected source the reply must have come from'),
    })
    .strict(),
]);
export const Expectations = z.record(Name, Expected);

const Phase = z.object({ title: z.string().optional(), steps: z.array(Step).default([]), expect: Expectations }).strict();
const Fix = Phase.extend({ name: Name.default('fix') }).strict();

export const EVIDENCE_KINDS = ['iptables', 'conntrack', 'ip', 'capture'] as const;

export const ScenarioSchema = z
  .object({
    id: ScenarioId,
    title: z.string().min(1),
    incident: z.string().optional().describe('path of the incident brief this scenario reproduces'),
    sources: z.array(z.string()).default([]),
    description: z.string().optional(),
    topology: Topology,
    probes: z.array(Probe).min(1),
    baseline: z.object({ expect: Expectations }).strict(),
    fault: Phase,
    fixes: z.array(Fix).min(1).describe('each fix runs on a fresh lab after baseline and fault'),
    evidence: z.array(z.enum(EVIDENCE_KINDS)).default([...EVIDENCE_KINDS]),
  })
  .strict();

export type Scenario = z.output<typeof ScenarioSchema>;
export type ScenarioInput = z.input<typeof ScenarioSchema>;
export type TopologySpec = Scenario['topology'];
export type ProbeSpec = Scenario['probes'][number];
export type StepSpec = Scenario['fault']['steps'][number];
export type ExpectedSpec = Scenario['baseline']['expect'][string];
export type FixSpec = Scenario['fixes'][number];
