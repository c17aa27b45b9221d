// The building blocks of the scenario format, shared by the scenario schema and the step and probe kinds.
import { z } from 'zod';

/** Names reach namespace names and command lines: keep them to DNS-label characters. */
export const Name = z
  .string()
  .regex(
    /^[a-z]([a-z0-9-]{0,30}[a-z0-9])?$/,
    'lower-case letters, digits and "-", starting with a letter, at most 32 characters',
  )
  .describe('a name: lower-case letters, digits and "-", starting with a letter, at most 32 characters');

/** Scenario ids are contract (reports, CI): longer than names, never used in interface or namespace names. */
export const ScenarioId = z
  .string()
  .regex(/^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/, 'lower-case letters, digits and "-", at most 63 characters')
  .describe('the scenario id: reports and CI name it; lower-case letters, digits and "-", at most 63 characters');
// patterns, not JSON Schema formats: a validator with its defaults (ajv) knows no "ipv4" or "cidrv4" format
const OCTET = '(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4 = `${OCTET}(\\.${OCTET}){3}`;
export const Ipv4 = z
  .string()
  .regex(new RegExp(`^${IPV4}$`), 'an IPv4 address such as 10.96.0.10')
  .describe('an IPv4 address');
export const Cidr = z
  .string()
  .regex(new RegExp(`^${IPV4}/(3[0-2]|[12]?\\d)$`), 'an IPv4 CIDR such as 10.244.1.0/24')
  .describe('an IPv4 CIDR');
export const Port = z.number().int().min(1).max(65535).describe('a port, 1-65535');
export const Duration = z
  .union([z.number().positive(), z.string().regex(/^\d+(\.\d+)?(ms|s)$/, 'a duration such as 800ms or 1s')])
  .describe('milliseconds as a number, or a string such as 800ms / 1.5s');
/** A reference to something with an address: pod/NAME, svc/NAME, lb/NAME (a LoadBalancer's address), node/NAME or host/NAME (outside the cluster). */
export const Ref = z
  .string()
  .regex(/^(pod|svc|lb|node|host)\/[a-z][a-z0-9-]*$/, 'pod/NAME, svc/NAME, lb/NAME, node/NAME or host/NAME')
  .describe(
    "something with an address: pod/NAME, svc/NAME (its ClusterIP), lb/NAME (a LoadBalancer Service's loadBalancerIP), node/NAME or host/NAME",
  );
/** What a probe sends to: something with an address, or `localhost`, the client's own loopback address. */
export const ProbeTarget = z
  .string()
  .regex(
    /^((pod|svc|lb|node|host)\/[a-z][a-z0-9-]*|localhost)$/,
    "pod/NAME, svc/NAME, lb/NAME, node/NAME, host/NAME or localhost (the client's own 127.0.0.1)",
  )
  .describe(
    "where the probe sends to: pod/NAME, svc/NAME (its ClusterIP), lb/NAME (a LoadBalancer Service's address), node/NAME, host/NAME, or localhost: the client's own loopback address 127.0.0.1 (a node's localhost reaches a hostPort bound to 127.0.0.1)",
  );
/**
 * The address of its node a hostPort is bound to (a container port's hostIP): `node/NAME`, the node's address
 * on the nodes' network, or 127.0.0.1, its loopback. Which node and which literal addresses are refused at
 * validation (scenario-references.ts): the address a provider gives a node is its own, so only the reference
 * means the same on every provider.
 */
export const HostIP = z
  .string()
  .regex(
    new RegExp(`^(node/[a-z][a-z0-9-]*|${IPV4})$`),
    "node/NAME (the pod's node's address) or 127.0.0.1 (its loopback)",
  )
  .describe(
    "the address of the pod's node the hostPort is bound to (a container port's hostIP): node/NAME for the node's address, or 127.0.0.1 for its loopback; without it, every address of the node",
  );
/** Where a step runs: a node, a pod or an external host. */
export const TargetRef = z
  .string()
  .regex(
    /^((pod|node|host)\/[a-z][a-z0-9-]*|fabric)$/,
    'pod/NAME, node/NAME, host/NAME or fabric (the network joining the nodes)',
  )
  .describe('where it runs: pod/NAME, node/NAME, host/NAME or fabric (the network joining the nodes)');

export const CNI_SHAPES = ['bridge', 'flannel', 'cilium'] as const;
export const COMPONENTS = ['kube-proxy', 'cilium', 'flannel'] as const;
/** A kube-proxy release, 1.14 or newer: its iptables layout is derived by version (src/dataplane/kube-proxy-layout.ts). */
export const KubeProxyVersion = z
  .string()
  .regex(/^1\.\d+$/, 'a kube-proxy release such as "1.29" (quoted in YAML)')
  .refine((v) => Number(v.split('.')[1]) >= 14, 'kube-proxy 1.14 or newer');
/**
 * The KubeProxyConfiguration fields a scenario sets: its clusterCIDR (by default the topology's; '' for none, as a
 * config that leaves it out) and masqueradeAll.
 */
export const KubeProxyConfigFields = {
  clusterCIDR: z
    .union([Cidr, z.literal('')])
    .optional()
    .describe(
      "kube-proxy's clusterCIDR (default: the topology's): packets from outside it to a ClusterIP are masqueraded; '' for none, so they keep their source address",
    ),
  masqueradeAll: z
    .boolean()
    .optional()
    .describe('masqueradeAll: every packet to a ClusterIP is SNATed to the node, from pods too (default false)'),
};
/** A label key as Kubernetes takes it: an optional DNS-subdomain prefix and a name of at most 63 characters. */
export const LabelKey = z
  .string()
  .regex(
    /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/,
    'a label key such as service.kubernetes.io/service-proxy-name',
  );
/** A label value: empty, or at most 63 characters. */
export const LabelValue = z.string().regex(/^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/, 'a label value');

/** CILIUM_FORWARD layouts: "1.7" for Cilium v1.6.2 - v1.7.4, "1.8" from v1.7.5 on (cilium/cilium PR 11819, backported to v1.7.5). */
export const CILIUM_VERSIONS = ['1.7', '1.8'] as const;
/** Socket-LB hooks a stale program may hold. */
export const SOCK_LB_HOOKS = ['connect4', 'sendmsg4'] as const;

/** The plugins a node's CNI network config list can chain in the lab, each called with the previous one's result. */
export const CNI_CHAIN_PLUGINS = ['bridge', 'portmap'] as const;
export type CniChainPlugin = (typeof CNI_CHAIN_PLUGINS)[number];
/** What real clusters ship with the bridge plugin (kubeadm's docs, containerd's example, kind): bridge, then portmap for hostPorts. */
export const DEFAULT_CNI_CHAIN: readonly CniChainPlugin[] = ['bridge', 'portmap'];
/** A node's CNI chain: the bridge plugin first (it makes the pod's interface), each plugin once. */
export const CniChain = z
  .array(z.enum(CNI_CHAIN_PLUGINS))
  .min(1)
  .refine(
    (c) => c[0] === 'bridge' && new Set(c).size === c.length,
    'bridge first, each plugin once: [bridge] or [bridge, portmap]',
  )
  .describe(
    "the plugins of the node's CNI network config list, in the order they run: bridge, then portmap (hostPorts)",
  );

/** A Service port: what `ports` holds in a topology's service and in a `service` step that replaces them. */
/** A container port's name (IANA_SVC_NAME): at most 15 lower-case letters, digits and inner dashes, one letter at least. */
export const PortName = z
  .string()
  .max(15)
  .regex(/^(?=.*[a-z])[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'a port name such as http (IANA_SVC_NAME: a-z, 0-9, inner -)')
  .refine((n) => !n.includes('--'), 'a port name has no two dashes in a row');
export const ServicePort = z
  .object({
    name: Name.optional(),
    port: Port,
    targetPort: z
      .union([Port, PortName])
      .describe("the pod's port: a number, or the name of a port its pods declare (pods[].ports), resolved pod by pod"),
    protocol: z.enum(['TCP', 'UDP']).default('TCP').describe('TCP or UDP'),
    nodePort: Port.optional().describe('type NodePort: the port on every node (KUBE-NODEPORTS)'),
  })
  .strict();
/** The API server refuses two ports with one name, or one port number twice for one protocol. */
export const servicePortsDistinct = (ports: readonly { name?: string; port: number; protocol: string }[]) =>
  new Set(ports.map((p) => p.name ?? '')).size === ports.length &&
  new Set(ports.map((p) => `${p.port}/${p.protocol}`)).size === ports.length;
/** A Service's whole port list, as the API server accepts it. */
export const ServicePorts = z
  .array(ServicePort)
  .min(1)
  .refine(servicePortsDistinct, 'each port needs its own name, and a port number appears once per protocol');
export const SessionAffinity = z.enum(['None', 'ClientIP']);
export const SessionAffinityConfig = z
  .object({
    clientIP: z
      .object({
        timeoutSeconds: z
          .number()
          .int()
          .min(1)
          .max(86400)
          .default(10800)
          .describe("how long a client keeps its endpoint after its last new flow (the API's range and default)"),
      })
      .strict()
      .describe("affinity by the client's address"),
  })
  .strict();
