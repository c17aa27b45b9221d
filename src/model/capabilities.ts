// What a scenario can need from a provider beyond pods and probes, and what each need is called in a
// skip reason. Step kinds declare theirs (`requires` in src/model/steps/); providers declare what
// they can do (src/contract/provider.ts); the engine compares both before anything is provisioned.
import type { LabAction } from './lab-action.ts';

/** Placeholder kinds that are lab names, not addresses (see placeholders.ts). */
export const PATH_KINDS = ['cgroup', 'bpffs', 'veth', 'port', 'bin'] as const;
export type PathKind = (typeof PATH_KINDS)[number];

export const LAB_ACTION_KINDS = [
  'start',
  'reboot',
  'sock-lb-stale-program',
  'sock-lb-detach-stale',
  'endpoint',
  'service',
  'cni-chain',
  'delete',
] as const satisfies readonly LabAction['kind'][];

export type Capability =
  /** Commands in a node's own network namespace (sysctls, iptables, captures on a node). */
  | 'node-exec'
  /** Hosts outside the cluster (`topology.hosts`, targets `host/NAME`). */
  | 'external-hosts'
  /** Commands on the network that joins the nodes (`fabric`). */
  | 'fabric'
  /** The probe agent run in a node's network namespace: a udp probe, or a dns probe by the agent, from `node/NAME`. */
  | 'node-agent'
  /** kube-proxy restarted as the release it runs, with another configuration if the step gives one. */
  | 'kube-proxy-restart'
  /** A lab action performed the provider's own way. */
  | `action/${LabAction['kind']}`
  /** A placeholder resolved to a lab name: `{cgroup/NODE}`, `{veth/POD}`... */
  | `path/${PathKind}`
  /** A kernel setting the host keeps for every network namespace, set on one node: a node with a kernel of its own. */
  | 'host-kernel'
  /** Pods, Services and nodes get the addresses the scenario writes down, so a literal address in a check means them. */
  | 'scenario-addresses'
  /** A node's BPF SNAT table read and printed one entry a line, as `cilium-dbg bpf nat list` prints it (an `snat` check). */
  | 'snat-table';

/** Everything a provider can declare; `host-kernel` is left out: no provider here gives a node a kernel of its own. */
export const ALL_CAPABILITIES: readonly Capability[] = [
  'node-exec',
  'external-hosts',
  'fabric',
  'node-agent',
  'kube-proxy-restart',
  ...LAB_ACTION_KINDS.map((k) => `action/${k}` as const),
  ...PATH_KINDS.map((k) => `path/${k}` as const),
  'scenario-addresses',
  'snat-table',
];

const MEANING: Record<string, string> = {
  'node-exec': "run commands in a node's network namespace",
  'external-hosts': 'have hosts outside the cluster',
  fabric: 'run commands on the network joining the nodes',
  'node-agent':
    "run the probe agent in a node's network namespace (a udp probe, or a dns probe with tool: agent, from node/NAME)",
  'kube-proxy-restart': "restart a node's kube-proxy (its own release, with another configuration if given)",
  'action/start': 'start a node component (kube-proxy of a given release, Cilium, flannel) by hand',
  'action/reboot': 'reboot a node (empty its iptables and conntrack, then start its components in a chosen order)',
  'action/sock-lb-stale-program': "attach a BPF socket-LB program to a node's pod cgroup from a private bpffs",
  'action/sock-lb-detach-stale': 'detach a socket-LB program it attached',
  'action/endpoint': "change a Service's endpoints and re-sync kube-proxy's rules on every node as kube-proxy does",
  'action/service': "change a Service's type or traffic policies and re-sync kube-proxy's rules on every node",
  'action/cni-chain': "change a node's CNI chain and recreate pods' sandboxes through it",
  'action/delete': "delete a pod: out of its Services' endpoints, then its sandbox torn down",
  'path/cgroup': "resolve {cgroup/NODE} (a node's pod cgroup)",
  'path/bpffs': "resolve {bpffs/NODE} (a node's bpffs pin directory)",
  'path/veth': "resolve {veth/POD} (a pod's host-side interface)",
  'path/port': "resolve {port/NODE} (a node's port on the fabric)",
  'path/bin': 'resolve {bin/NAME} (a helper program built at set-up)',
  'host-kernel': "set a kernel setting the whole host shares on one node (its nodes share the host's kernel)",
  'scenario-addresses':
    'give pods, Services and nodes the addresses the scenario writes down (the cluster allocates its own, so a literal address there names nothing; write {pod/NAME}, {svc/NAME} or {node/NAME} in commands)',
  'snat-table': "read a node's BPF SNAT table (Cilium's cilium_snat_v4_external)",
};

/** What a lab action needs: its own kind, except kube-proxy restarted as the release it runs, which needs less. */
export function actionNeeds(action: LabAction): Capability {
  return action.kind === 'start' && action.component === 'kube-proxy' && action.version === undefined
    ? 'kube-proxy-restart'
    : `action/${action.kind}`;
}

/** `kind cannot <meaning>`. */
export const capabilityMeaning = (c: Capability): string => MEANING[c] ?? c;

/** What a target reference needs: `node/x` a node's namespace, `host/x` hosts, `fabric` the fabric; pods nothing. */
export function targetNeeds(on: string): Capability[] {
  if (on === 'fabric') return ['fabric'];
  if (on.startsWith('node/')) return ['node-exec'];
  if (on.startsWith('host/')) return ['external-hosts'];
  return [];
}

/** What the placeholders in some words need: `{veth/web}` -> path/veth; addresses need nothing. */
export function placeholderNeeds(words: readonly string[]): Capability[] {
  const out: Capability[] = [];
  for (const w of words) {
    for (const m of w.matchAll(/\{([a-z]+)\/[a-z][a-z0-9-]*\}/g)) {
      const kind = m[1] ?? '';
      if ((PATH_KINDS as readonly string[]).includes(kind)) out.push(`path/${kind as PathKind}`);
      else if (kind === 'host') out.push('external-hosts');
    }
  }
  return out;
}

/** A need and where in the scenario it comes from (`fault, step 1 (reboot)`). */
export interface Requirement {
  capability: Capability;
  by: string;
  /** The fix variant that alone needs it: a provider without it can still run the other variants. */
  fix?: string;
}
