// What a step is made of, after expansion: a command on a target (argv, never a shell string) or a
// lab action the provider performs its own way (providers map each kind to their means, or refuse it).
import type { CniChainPlugin } from './primitives.ts';

export interface Command {
  kind: 'command';
  /** `node/NAME`, `pod/NAME`, `host/NAME` or `fabric`. */
  on: string;
  argv: string[];
  /**
   * What proves it worked: an exit status (`any` for none), and a line it must print or, with `silent`, that it
   * prints nothing (a route read back after its deletion).
   */
  expect: { exit: number | 'any'; prints?: string; silent?: true };
  /** A command whose output must equal `value` afterwards: the change really took effect (a sysctl read back). */
  readBack?: { argv: string[]; value: string };
  /** Runs alongside the probes of this phase and every later one (a trigger that keeps firing). */
  background?: { leadMs: number };
  timeoutMs: number;
}

export type NodeComponentName = 'kube-proxy' | 'cilium' | 'flannel';

/** kube-proxy's configuration fields the lab honours: clusterCIDR ('' for none) and masqueradeAll. */
export interface KubeProxyConfig {
  clusterCIDR: string;
  masqueradeAll: boolean;
}

/** Node-level operations that are not a plain command. */
export type LabAction =
  | {
      kind: 'start';
      node: string;
      component: NodeComponentName;
      version?: string;
      /** kube-proxy's configuration from this start on (fields left out keep the node's current ones). */
      config?: Partial<KubeProxyConfig>;
    }
  /** The node's iptables rules and conntrack table are emptied, then its components start in `order` (default: the topology's). */
  | { kind: 'reboot'; node: string; order?: NodeComponentName[] }
  | {
      kind: 'sock-lb-stale-program';
      node: string;
      service: string;
      port: number;
      backend: string;
      first: boolean;
      hook: 'connect4' | 'sendmsg4';
    }
  | { kind: 'sock-lb-detach-stale'; node: string }
  /** An EndpointSlice change, then kube-proxy's sync on every node (its chains rewritten, UDP conntrack cleaned as its release does). */
  | {
      kind: 'endpoint';
      service: string;
      pod: string;
      op: 'add' | 'remove' | 'set';
      ready?: boolean;
      terminating?: boolean;
    }
  /** A pod deleted: out of every Service's endpoints (kube-proxy syncs), then its sandbox torn down. */
  | { kind: 'delete'; pod: string }
  /** The node's CNI chain changes and the named pods' sandboxes are made again through it (DEL old chain, ADD new). */
  | { kind: 'cni-chain'; node: string; plugins: CniChainPlugin[]; recreate: string[] }
  /** A Service spec change, then kube-proxy's sync on every node. */
  | {
      kind: 'service';
      name: string;
      type?: 'ClusterIP' | 'NodePort';
      nodePorts?: number[];
      externalTrafficPolicy?: 'Cluster' | 'Local';
      internalTrafficPolicy?: 'Cluster' | 'Local';
      sessionAffinity?: 'None' | 'ClientIP';
      sessionAffinityConfig?: { clientIP: { timeoutSeconds: number } };
      ports?: {
        name?: string;
        port: number;
        targetPort: number | string;
        protocol: 'TCP' | 'UDP';
        nodePort?: number;
      }[];
      publishNotReadyAddresses?: boolean;
      /** A LoadBalancer's new source ranges; null removes them (every client let in). */
      loadBalancerSourceRanges?: string[] | null;
      /** Labels set, or removed where null (a merge patch of metadata.labels). */
      labels?: Record<string, string | null>;
    };

export type Expanded = Command | LabAction;
