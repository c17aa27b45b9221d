// The scenario file format: one zod schema is the single source of truth for validation,
// the TypeScript types and the published JSON Schema (scenarios/scenario.schema.json).
import { z } from 'zod';
import { OUTCOMES } from './outcome.ts';

export {
  Name,
  ScenarioId,
  Ipv4,
  Cidr,
  Port,
  Duration,
  Ref,
  TargetRef,
  CNI_SHAPES,
  COMPONENTS,
  KubeProxyVersion,
  CILIUM_VERSIONS,
  SOCK_LB_HOOKS,
} from './primitives.ts';
import {
  Name,
  ScenarioId,
  Ipv4,
  Cidr,
  Port,
  Duration,
  Ref,
  TargetRef,
  CNI_SHAPES,
  COMPONENTS,
  KubeProxyVersion,
  KubeProxyConfigFields,
  CILIUM_VERSIONS,
  LabelKey,
  LabelValue,
  PortName,
  ServicePorts,
  SessionAffinity,
  SessionAffinityConfig,
  CniChain,
  HostIP,
} from './primitives.ts';
import { Step } from './steps/registry.ts';
import { PROBE_KINDS, probeKindFields, type ProbeKindName } from './probes/registry.ts';
import { CapturedState, NotReplayed } from './captured-state.ts';

const PROBE_KIND_NAMES = Object.keys(PROBE_KINDS) as ProbeKindName[];

const Program = z
  .object({
    http: Port.optional().describe(
      'HTTP echo server on this port; it answers with its pod name and reports the client address it saw',
    ),
    udp: Port.optional().describe(
      'UDP server on this port; it answers every datagram with its pod name and the client address it saw',
    ),
    dns: Port.optional().describe(
      'DNS server on this UDP port answering <svc>.<ns>.svc.cluster.local for every service',
    ),
  })
  .strict()
  .refine((p) => Object.keys(p).length === 1, 'one program per entry: http, udp or dns');

const Node = z
  .object({
    name: Name,
    podCIDR: Cidr.describe('pod subnet of this node, handed to host-local IPAM'),
    sysctls: z
      .record(z.string().regex(/^net\.[a-z0-9_.-]+$/, 'a net.* sysctl'), z.union([z.string(), z.number()]))
      .optional()
      .describe('extra sysctls set in the node namespace at provisioning'),
    forwardPolicy: z
      .enum(['ACCEPT', 'DROP'])
      .default('ACCEPT')
      .describe(
        'policy of the FORWARD chain at boot: DROP as Docker sets it, so only rules (KUBE-FORWARD, FLANNEL-FWD, ...) let pod traffic through',
      ),
    defaultRoute: z
      .string()
      .regex(
        /^(fabric|none|host\/[a-z][a-z0-9-]*)$/,
        "fabric, none, or host/NAME: an external host on the nodes' network",
      )
      .default('fabric')
      .describe(
        "the node's default route, as a real node has one: `fabric` (the default) via the lab's gateway on the nodes' network (172.18.0.1, the fabric namespace, which forwards nothing: a packet for an address outside the lab is dropped there); `host/NAME` via that external host; `none` for no default route, so a packet no route covers (a ClusterIP no DNAT rewrote) gets ICMP net-unreachable from the node itself",
      ),
    cniChain: CniChain.optional().describe(
      "the node's CNI network config list (bridge and flannel shapes), default [bridge, portmap] as real clusters ship it: the lab calls each plugin for every pod the way a kubelet's runtime does; without portmap a pod's hostPorts are not written",
    ),
    address: Ipv4.optional().describe(
      "the node's address on the nodes' network 172.18.0.0/24 (default 172.18.0.(2+i) for the i-th node): a replay keeps the captured address its rules name",
    ),
    captured: CapturedState.optional(),
  })
  .strict();

const HostPort = z
  .object({
    hostPort: Port.describe("the port on the node's addresses (on its hostIP alone when given)"),
    containerPort: Port.describe('the port in the pod it is forwarded to'),
    protocol: z.enum(['TCP', 'UDP']).default('TCP').describe('TCP or UDP'),
    hostIP: HostIP.optional(),
  })
  .strict();

const ContainerPort = z
  .object({
    name: PortName.describe("the port's name, as a Service's targetPort names it"),
    containerPort: Port,
    protocol: z.enum(['TCP', 'UDP']).default('TCP').describe('TCP or UDP'),
  })
  .strict();

const Pod = z
  .object({
    name: Name,
    node: Name,
    ip: Ipv4.optional().describe(
      "the pod's address, asked of host-local (default: .2, .3, ... of its node's podCIDR in pod order): a replay keeps the captured address its rules name; a node's pods name one all or none",
    ),
    serve: z.array(Program).optional().describe('programs started in the pod'),
    ports: z
      .array(ContainerPort)
      .min(1)
      .optional()
      .describe(
        "the pod's named container ports: a Service whose targetPort names one reaches this pod on its number, and leaves out a pod without it",
      ),
    hostPorts: z
      .array(HostPort)
      .min(1)
      .optional()
      .describe(
        "ports of its node forwarded to this pod (a container port's hostPort, on every address of the node or on its hostIP): the node's CNI chain gets them as runtimeConfig.portMappings, and its portmap plugin writes the DNAT",
      ),
  })
  .strict();

const EndpointEntry = z
  .union([
    Name,
    z
      .object({
        pod: Name,
        ready: z
          .boolean()
          .default(true)
          .describe('the pod passes its readiness probe (for a terminating pod: still serving)'),
        terminating: z
          .boolean()
          .default(false)
          .describe('the pod is being deleted (EndpointSlice conditions.terminating)'),
      })
      .strict(),
  ])
  .transform((e) => (typeof e === 'string' ? { pod: e, ready: true, terminating: false } : e));

const Service = z
  .object({
    name: Name,
    namespace: Name.default('default'),
    labels: z
      .record(LabelKey, LabelValue)
      .optional()
      .describe(
        "the Service's labels: service.kubernetes.io/service-proxy-name (any value) leaves it to another proxy, kube-proxy ignores it and its endpoints; so does service.kubernetes.io/headless from kube-proxy 1.16",
      ),
    clusterIP: z
      .union([Ipv4, z.literal('None')])
      .describe(
        'its virtual address; None for a headless Service: kube-proxy writes nothing for it, and the cluster DNS answers its name with the addresses of its ready endpoints',
      ),
    type: z
      .enum(['ClusterIP', 'NodePort', 'LoadBalancer'])
      .default('ClusterIP')
      .describe(
        "ClusterIP, NodePort (also reachable on every node's port) or LoadBalancer (a NodePort Service with a load balancer's address, loadBalancerIP)",
      ),
    externalTrafficPolicy: z
      .enum(['Cluster', 'Local'])
      .default('Cluster')
      .describe("NodePort and LoadBalancer traffic: any endpoint (SNAT) or only this node's"),
    loadBalancerIP: Ipv4.optional().describe(
      "type LoadBalancer: the load balancer's address, published as status.loadBalancer.ingress[0].ip (no cloud controller runs: the lab and the real providers set the status themselves); a `route` step to it via a node is what a load balancer that keeps the client's address does",
    ),
    loadBalancerSourceRanges: z
      .array(Cidr)
      .min(1)
      .optional()
      .describe(
        "type LoadBalancer: the only client ranges let in through the load balancer's address (kube-proxy's KUBE-FW chain, or KUBE-PROXY-FIREWALL from 1.25); NodePorts are not filtered",
      ),
    healthCheckNodePort: Port.optional().describe(
      "type LoadBalancer with externalTrafficPolicy Local: the port kube-proxy serves the Service's health check on, on every node (HTTP 200 with localEndpoints N where the node has ready endpoints, 503 where it has none)",
    ),
    internalTrafficPolicy: z
      .enum(['Cluster', 'Local'])
      .default('Cluster')
      .describe("ClusterIP traffic: any endpoint or only this node's (kube-proxy >= 1.22)"),
    sessionAffinity: SessionAffinity.optional().describe(
      "ClientIP: a client address keeps its endpoint (kube-proxy's `-m recent` rules); None (the default): each new flow is balanced",
    ),
    sessionAffinityConfig: SessionAffinityConfig.optional().describe(
      'ClientIP affinity: how long a client keeps its endpoint',
    ),
    publishNotReadyAddresses: z
      .boolean()
      .default(false)
      .describe('its endpoints count as ready whether their pods are or not (and a terminating one stays ready)'),
    ports: ServicePorts.describe("the Service's ports"),
    endpoints: z
      .array(EndpointEntry)
      .describe('pods backing the service, in EndpointSlice order: a pod name, or {pod, ready, terminating}'),
  })
  .strict()
  .refine((s) => s.type === 'ClusterIP' || s.ports.every((p) => p.nodePort !== undefined), {
    message: 'a NodePort or LoadBalancer service names a nodePort on every port',
    path: ['ports'],
  })
  .refine((s) => s.type !== 'ClusterIP' || s.ports.every((p) => p.nodePort === undefined), {
    message: 'nodePort needs type: NodePort or LoadBalancer',
    path: ['ports'],
  })
  .refine((s) => (s.type === 'LoadBalancer') === (s.loadBalancerIP !== undefined), {
    message:
      'type LoadBalancer names its load balancer address (loadBalancerIP), and only a LoadBalancer service has one',
    path: ['loadBalancerIP'],
  })
  .refine((s) => s.loadBalancerSourceRanges === undefined || s.type === 'LoadBalancer', {
    message: 'loadBalancerSourceRanges needs type: LoadBalancer',
    path: ['loadBalancerSourceRanges'],
  })
  .refine(
    (s) => (s.healthCheckNodePort !== undefined) === (s.type === 'LoadBalancer' && s.externalTrafficPolicy === 'Local'),
    {
      message:
        'healthCheckNodePort is set on a LoadBalancer service with externalTrafficPolicy Local, and on no other (as the API server requires; the scenario names it as it names nodePorts)',
      path: ['healthCheckNodePort'],
    },
  )
  .refine((s) => s.healthCheckNodePort === undefined || s.ports.every((p) => p.nodePort !== s.healthCheckNodePort), {
    message: 'healthCheckNodePort must differ from every nodePort',
    path: ['healthCheckNodePort'],
  })
  .refine(
    (s) => s.sessionAffinityConfig === undefined || s.sessionAffinity === 'ClientIP',
    'sessionAffinityConfig needs sessionAffinity: ClientIP',
  )
  .refine(
    (s) => s.clusterIP !== 'None' || (s.type === 'ClusterIP' && s.sessionAffinity !== 'ClientIP'),
    'a headless Service (clusterIP: None) is of type ClusterIP, without session affinity (as the API server requires)',
  );

const Host = z
  .object({ name: Name, serve: z.array(Program).optional().describe('programs the host serves') })
  .strict()
  .describe("a machine outside the cluster, on the nodes' network, with no route back to the pod network");

const Cilium = z
  .object({
    bpfMasquerade: z
      .boolean()
      .default(true)
      .describe('SNAT pod -> node IP in tc BPF on the node device (reply bypasses netfilter)'),
    socketLB: z
      .boolean()
      .default(false)
      .describe(
        'cgroup connect4/sendmsg4/recvmsg4/getpeername4 programs rewriting ClusterIP <-> backend in the system calls',
      ),
    version: z
      .enum(CILIUM_VERSIONS)
      .default('1.8')
      .describe(
        'the CILIUM_FORWARD rules the agent installs: "1.7" for Cilium v1.6.2 - v1.7.4, "1.8" for v1.7.5 and later',
      ),
    endpointRoutes: z
      .boolean()
      .default(false)
      .describe(
        'enable-endpoint-routes as the agent sees it: changes the CILIUM_FORWARD rules only (the lab always routes each pod by its lxc)',
      ),
    nativeRoutingCIDR: Cidr.optional().describe(
      'ipv4-native-routing-cidr: never masqueraded, routed between nodes; default the cluster CIDR',
    ),
  })
  .strict();

export const Topology = z
  .object({
    cni: z
      .enum(CNI_SHAPES)
      .describe('the CNI shape: bridge (cni0), flannel (cni0 + VXLAN), cilium (routed lxc veths, BPF)'),
    kubeProxy: KubeProxyVersion.default('1.29').describe(
      'kube-proxy release whose iptables-mode layout the lab writes (any 1.y from 1.14)',
    ),
    kubeProxyConfig: z
      .object(KubeProxyConfigFields)
      .strict()
      .default({})
      .describe("kube-proxy's configuration on every node at boot (a `start` step can restart it with another)"),
    cilium: Cilium.default({ bpfMasquerade: true, socketLB: false, version: '1.8', endpointRoutes: false }).describe(
      'options of the cilium shape',
    ),
    startOrder: z
      .array(z.enum(COMPONENTS))
      .default(['kube-proxy', 'cilium'])
      .describe(
        'order the node components start in at boot (kube-proxy, cilium, flannel; those not in the CNI shape are skipped); with no rules yet, the last prepender ends up first in FORWARD',
      ),
    hosts: z.array(Host).default([]).describe("machines outside the cluster, on the nodes' network"),
    clusterCIDR: Cidr.default('10.244.0.0/16').describe("the pod network; every node's podCIDR lies in it"),
    nodes: z.array(Node).min(1).describe('the nodes, each with its pod subnet'),
    pods: z.array(Pod).min(1).describe('the pods, each on a node, with the programs it serves'),
    services: z.array(Service).default([]).describe('Services kube-proxy writes rules for'),
    notReplayed: z
      .array(NotReplayed)
      .default([])
      .describe(
        'what a captured cluster held that the lab does not restore (netrepro import names it; `netrepro validate` prints it): a replay without it may differ from the incident there',
      ),
  })
  .strict();

export const Probe = z
  .object({
    id: Name,
    from: z
      .union([
        Name,
        z
          .string()
          .regex(
            /^(pod|node|host)\/[a-z][a-z0-9-]*$/,
            'a pod name, pod/NAME, node/NAME (its host network) or host/NAME (outside the cluster)',
          ),
      ])
      .describe(
        "where the probe runs: a pod (plain name or pod/NAME), a node's host network (node/NAME) or a host outside the cluster (host/NAME)",
      ),
    timeout: Duration.default(800).describe(
      'verdict deadline; a hang is called after this (conclusive evidence ends a probe sooner)',
    ),
    repeat: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .optional()
      .describe(
        'run the probe N times and report the distribution of outcomes; expectations then hold for every run, or for a count/rate',
      ),
    parallel: z.number().int().min(1).max(64).default(1).describe('with repeat: how many runs at once'),
    during: z
      .unknown()
      .refine(() => false, {
        message:
          'probe `during` commands moved into the phase: write each as a step of the phase that needs it, `- run: { on: ..., cmd: ..., background: true, lead: 50ms, expect: { prints: ... } }`; a background step of the fault keeps running in every later phase, and its exit and output are asserted',
      })
      .optional()
      .describe('removed: use a background `run` step in the phase (validation says how)'),
    ...probeKindFields,
  })
  .strict()
  .refine(
    (p) => PROBE_KIND_NAMES.filter((k) => p[k] !== undefined).length === 1,
    `a probe has exactly one kind: ${PROBE_KIND_NAMES.join(', ')}`,
  )
  .refine((p) => p.parallel === 1 || p.repeat !== undefined, 'parallel needs repeat');

const Expected = z.union([
  z.enum(OUTCOMES).describe('the outcome the probe must observe'),
  z
    .object({
      outcome: z
        .union([z.enum(OUTCOMES), z.array(z.enum(OUTCOMES)).min(2)])
        .describe(
          'what the client observes: ok, timeout, reset, refused, unexpected-source, wrong-answer, unreachable, error; or a list of failures any of which holds (upstream\'s "the connection fails", where the network beyond the nodes decides how)',
        ),
      servedBy: Name.optional().describe('the pod (or host) that must have answered'),
      source: Ref.optional().describe('the unexpected source the reply must have come from'),
      connected: z
        .boolean()
        .optional()
        .describe('whether the TCP handshake completed (e.g. connected, but no HTTP answer)'),
      sentTo: z
        .union([Ref, z.string().regex(/^\d+\.\d+\.\d+\.\d+:\d+$/, 'IP:PORT')])
        .optional()
        .describe("where the client's SYN really went (a socket-LB rewrite shows here)"),
      count: z
        .union([
          z.number().int().min(0),
          z
            .object({
              min: z.number().int().min(0).optional().describe('at least this many runs'),
              max: z.number().int().min(0).optional().describe('at most this many runs'),
            })
            .strict(),
        ])
        .optional()
        .describe('repeated probes: how many runs must have this outcome (a number or {min, max})'),
      rate: z
        .object({
          min: z.number().min(0).max(1).optional().describe('at least this fraction of runs'),
          max: z.number().min(0).max(1).optional().describe('at most this fraction of runs'),
        })
        .strict()
        .optional()
        .describe('repeated probes: the fraction of runs with this outcome, 0..1'),
      otherwise: z
        .enum(OUTCOMES)
        .optional()
        .describe('repeated probes: every run without `outcome` must have this one'),
      sameBackend: z
        .boolean()
        .optional()
        .describe(
          'repeated probes: every run that meets the expectation was served by one pod, whichever (session affinity)',
        ),
      clientAddress: z
        .union([Ref, Ipv4])
        .optional()
        .describe(
          "http, udp and download probes with outcome ok: the address the server saw the request come from (pod/x, node/x, host/x or an IPv4 address): the client's own when its source is preserved, a node's when SNAT hid it",
        ),
      httpStatus: z
        .number()
        .int()
        .min(100)
        .max(599)
        .optional()
        .describe(
          'http probes: the status code of the answer (2xx and 3xx are outcome ok, any other wrong-answer), e.g. 503 from a kube-proxy health check on a node without local endpoints',
        ),
      localEndpoints: z
        .number()
        .int()
        .min(0)
        .optional()
        .describe(
          "http probes of a Service's healthCheckNodePort: the count of the node's local ready endpoints kube-proxy's health check reports (`\"localEndpoints\": N`)",
        ),
      answer: z
        .union([Ref, Ipv4, z.array(z.union([Ref, Ipv4])).min(1)])
        .optional()
        .describe(
          'DNS probes: the address the answer section must hold (svc/x, pod/x or an IPv4 address), or a list: exactly those addresses, in any order (a headless Service); an ok reply otherwise is `wrong-answer`',
        ),
    })
    .strict()
    .refine((e) => !Array.isArray(e.outcome) || !e.outcome.includes('ok'), {
      message: 'a list of outcomes names failures only: with ok in it, a failure would pass as well as a success',
      path: ['outcome'],
    }),
]);
export const Expectations = z
  .record(Name, Expected)
  .describe('probe id -> what it must observe: an outcome, or an outcome with more conditions');

const Range = z.union([
  z.number().int().describe('exactly this'),
  z
    .object({
      min: z.number().int().optional().describe('at least this'),
      max: z.number().int().optional().describe('at most this'),
    })
    .strict(),
]);
/** A flow whose entries a node's BPF SNAT table holds: read by each provider its own way (snat-table.ts). */
export const SnatFlow = z
  .object({
    from: Ref.describe('the client: pod/NAME'),
    to: Ref.describe('the server outside the pod network: host/NAME, node/NAME or pod/NAME'),
    port: Port.describe("the server's port"),
    protocol: z.enum(['tcp', 'udp']).default('tcp').describe("the flow's protocol"),
  })
  .strict()
  .describe(
    "the node's BPF SNAT table (Cilium's cilium_snat_v4_external): its reply entries of flows from `from` to `to`:`port`, one per connection, read before and after the probes; expect.delta bounds the entries the probes added (one present before does not count, so its expiry does not either)",
  );
export const Check = z
  .object({
    id: Name,
    on: TargetRef,
    cmd: z
      .union([z.string().min(1), z.array(z.string()).min(1)])
      .optional()
      .describe(
        'argv, or a string split on spaces with quotes; no shell; placeholders such as {pod/web} or {ns/default} resolved',
      ),
    snat: SnatFlow.optional(),
    counter: z
      .string()
      .optional()
      .describe(
        "regex whose first group is a number, read before and after the phase's probes ({ns/default} and other placeholders resolved as literal text)",
      ),
    sum: z
      .boolean()
      .default(false)
      .describe('counter: add up the first group over every matching line (e.g. conntrack -S per CPU)'),
    absentIsZero: z
      .boolean()
      .default(false)
      .describe(
        'counter: read 0 when no line matches; without it a counter whose pattern matches no line fails the check ("no line matched")',
      ),
    background: z
      .boolean()
      .default(false)
      .describe(
        'run cmd for the whole span of the probes (a capture) and count `matches` over its printable output; binary output is split into printable strings',
      ),
    ready: z
      .string()
      .optional()
      .describe(
        'background: regex of the output line that says the command is listening (e.g. "listening on") ({ns/default} and other placeholders resolved as literal text)',
      ),
    matches: z
      .string()
      .optional()
      .describe(
        'regex counted over the output lines after the probes ({ns/default} and other placeholders resolved as literal text)',
      ),
    expect: z
      .object({
        delta: Range.optional().describe('counter change over the probes'),
        count: Range.optional().describe('lines matching `matches`'),
      })
      .strict()
      .optional()
      .describe('the bound the number must fall in; a check without one must say `report: true`'),
    report: z
      .literal(true)
      .optional()
      .describe(
        'the number is reported, not asserted: shown as such in every report; the check fails only when it cannot be read',
      ),
    control: z
      .boolean()
      .default(false)
      .describe(
        "holds whether or not the phase's steps ran (it proves the probes ran, not the fault or fix): `mutate` does not require it to fail when they are removed",
      ),
  })
  .strict()
  .refine(
    (c) => (c.expect === undefined) !== (c.report === undefined),
    'a check has an `expect` bound, or `report: true` for a number that is only reported (not both)',
  )
  .refine(
    (c) => (c.cmd === undefined) !== (c.snat === undefined),
    "a check reads a command (`cmd`) or a node's SNAT table (`snat`), one of them",
  )
  .refine(
    (c) =>
      c.snat
        ? c.counter === undefined &&
          c.matches === undefined &&
          !c.background &&
          c.on.startsWith('node/') &&
          (c.report || c.expect?.delta !== undefined)
        : true,
    'an snat check is on node/NAME with expect.delta (or `report: true`); no counter, matches or background',
  )
  .refine(
    (c) =>
      c.snat ||
      (c.counter
        ? c.matches === undefined && (c.report || c.expect?.delta !== undefined)
        : c.matches !== undefined && (c.report || c.expect?.count !== undefined)),
    'a check has counter + expect.delta, or matches + expect.count (with `report: true`, counter or matches alone)',
  )
  .refine((c) => !(c.background && c.counter), 'a background check counts `matches` lines; it has no counter');

/** Something must be asserted, or a phase cannot fail: an empty `expect` needs checks that assert (not only report). */
const asserts = (p: { expect: Record<string, unknown>; checks: { report?: true }[] }) =>
  Object.keys(p.expect).length > 0 || p.checks.some((c) => !c.report);
const NOTHING_ASSERTED = {
  message: 'this phase asserts nothing: expect at least one probe outcome or add a check',
  path: ['expect'],
};
const PhaseFields = {
  title: z.string().optional().describe('one line: what this phase does'),
  steps: z
    .array(Step)
    .min(1, 'a fault or fix needs at least one step: what makes (or removes) the symptom')
    .describe('what makes (or removes) the symptom, in order'),
  expect: Expectations,
  checks: z.array(Check).default([]).describe('evidence asserted directly: counters and matching lines'),
};
const Phase = z.object(PhaseFields).strict().refine(asserts, NOTHING_ASSERTED);
const Fix = z
  .object({
    ...PhaseFields,
    name: Name.default('fix'),
    control: z
      .literal('not-a-fix')
      .optional()
      .describe(
        'a negative control: a change people try that does NOT fix it; its symptoms are asserted, and a check must prove its steps took effect',
      ),
  })
  .strict()
  .refine(asserts, NOTHING_ASSERTED)
  .refine((f) => f.control === undefined || f.checks.length > 0, {
    message: 'a negative control needs a check proving its steps took effect (e.g. the sysctl or rule is in place)',
    path: ['checks'],
  });

/** The fault of a replay: nothing done, nothing asserted (the captured state is the fault; no lab runs it). */
const NO_FAULT: z.output<typeof Phase> = { steps: [], expect: {}, checks: [] };

export const EVIDENCE_KINDS = ['iptables', 'conntrack', 'ip', 'capture', 'bpf'] as const;

export const ScenarioSchema = z
  .object({
    id: ScenarioId,
    title: z.string().min(1).describe('one line saying what happens (reports carry it)'),
    incident: z.string().optional().describe('path of the incident brief this scenario reproduces'),
    purpose: z
      .enum(['reproduce', 'measure', 'preserve', 'replay'])
      .default('reproduce')
      .describe(
        "reproduce: the faulted phase asserts the symptom; measure: the run reports `measured` with its numbers, never `passed` (the gate skips it); preserve: the fault is a change traffic must survive (a server pod cycles), so the faulted phase expects the baseline's outcomes and its checks prove the change happened; replay: the nodes hold a captured state (`netrepro import`), which is the fault: no fault phase, the baseline probes the captured cluster and each fix runs after it",
      ),
    sources: z
      .array(z.string())
      .default([])
      .describe('links to the upstream issues, pull requests and write-ups the scenario rests on'),
    description: z.string().optional().describe('the mechanism in a few sentences'),
    topology: Topology.describe('the cluster: CNI shape, kube-proxy release, nodes, pods, Services, hosts outside it'),
    probes: z
      .array(Probe)
      .min(1)
      .describe('what clients do: HTTP, DNS or a download, from a pod, a node or an outside host'),
    baseline: z
      .object({
        steps: z
          .array(Step)
          .optional()
          .describe(
            'setup: steps that make the healthy cluster the incident starts from (run before the baseline probes, kept by every mutant)',
          ),
        expect: Expectations,
        checks: z.array(Check).default([]).describe('evidence of the healthy cluster'),
      })
      .strict()
      .describe('the healthy cluster: what every probe observes before the fault'),
    fault: Phase.optional().describe(
      'the steps that make the symptom, and the symptom asserted (none in a replay: the captured state is the fault)',
    ),
    fixes: z
      .array(Fix)
      .default([])
      .describe('each fix runs on a fresh lab after baseline and fault (a replay may have none yet)'),
    evidence: z
      .array(z.enum(EVIDENCE_KINDS))
      .default([...EVIDENCE_KINDS])
      .describe('what is collected per phase and node: iptables, conntrack, ip, capture, bpf'),
  })
  .strict()
  .superRefine((s, ctx) => {
    const replay = s.purpose === 'replay';
    if (replay && s.fault)
      ctx.addIssue({
        code: 'custom',
        path: ['fault'],
        message: 'a replay has no fault phase: the captured state is the fault (add the fix under `fixes`)',
      });
    if (!replay && !s.fault)
      ctx.addIssue({
        code: 'custom',
        path: ['fault'],
        message: 'required field is missing: a fault phase (only a replay has none)',
      });
    if (!replay && s.fixes.length === 0)
      ctx.addIssue({
        code: 'custom',
        path: ['fixes'],
        message: 'required field is missing: at least one fix (only a replay may have none)',
      });
    const captured = s.topology.nodes.map((n) => n.captured !== undefined);
    if (replay && !captured.every(Boolean))
      ctx.addIssue({
        code: 'custom',
        path: ['topology', 'nodes', captured.indexOf(false)],
        message: 'a replay restores a captured state on every node: this node has no `captured`',
      });
    if (!replay && captured.some(Boolean))
      ctx.addIssue({
        code: 'custom',
        path: ['topology', 'nodes', captured.indexOf(true), 'captured'],
        message: 'a captured state is the incident itself, not a healthy baseline: it needs `purpose: replay`',
      });
  })
  // a replay's phases are its baseline and fixes; the empty fault keeps every other reader's shape
  .transform((s) => ({ ...s, fault: s.fault ?? NO_FAULT }));

export type Scenario = z.output<typeof ScenarioSchema>;
export type ScenarioInput = z.input<typeof ScenarioSchema>;
export type TopologySpec = Scenario['topology'];
export type ProbeSpec = Scenario['probes'][number];
export type StepSpec = Scenario['fault']['steps'][number];
export type ExpectedSpec = Scenario['baseline']['expect'][string];
export type FixSpec = Scenario['fixes'][number];
export type CheckSpec = Scenario['fault']['checks'][number];
