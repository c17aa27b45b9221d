// What a probe's trace records while it runs, provider-agnostic: netfilter rule verdicts with the
// rule text, kernel drop reasons, conntrack state changes, the lab's BPF programs and settings that
// decide a packet's path. Providers fill it (src/providers/netns/trace/), src/observe/trace/ reads it.

/** Off with NETREPRO_TRACE=0 (for measuring what tracing costs); on otherwise. */
export const tracingEnabled = () => process.env.NETREPRO_TRACE !== '0';

export interface TracePacket {
  proto: string;
  src: string;
  dst: string;
  sport?: number;
  dport?: number;
  /** TCP flags as words (`SYN ACK`), when known. */
  flags?: string;
  /** ICMP type and code (and, for fragmentation needed, the next hop's MTU), when known. */
  icmp?: { type: number; code: number; mtu?: number };
  /** An ICMP error's quoted header: the packet the error is about. */
  inner?: TracePacket;
}

/** Milliseconds since the trace started. */
type At = { at: number };

export type TraceEvent =
  /** A netfilter rule or policy a packet hit, with the verdict (xtables-monitor --trace). */
  | (At & {
      kind: 'rule';
      node: string;
      table: string;
      chain: string;
      verdict: string;
      target?: string;
      rule?: string;
      iif?: string;
      oif?: string;
      packet: TracePacket;
      id: string;
    })
  /**
   * The kernel freed a packet with a drop reason (kfree_skb). `where` is `node/x`, `pod/y`, `host/z` or `fabric`.
   * `repeat`: this drop stands for that many identical ones that came within a few ms (a bulk transfer's qdisc drops); absent: one.
   * `dmac`: the frame's Ethernet destination, when it had a MAC header; `cause`: what the namespace's state
   * showed about the drop when it happened.
   */
  | (At & {
      kind: 'drop';
      where: string;
      reason: string;
      location: string;
      iface: string;
      packet: TracePacket;
      repeat?: number;
      dmac?: string;
      cause?: DropCause;
    })
  /** A conntrack state change (conntrack -E): NEW, UPDATE, DESTROY. */
  | (At & {
      kind: 'conntrack';
      node: string;
      event: string;
      state?: string;
      packet: TracePacket;
      reply: TracePacket;
      unreplied: boolean;
      line: string;
    });

/** A drop explained by the kernel's state in its namespace, read at the drop. */
export type DropCause =
  /** NEIGH_FAILED: the neighbour that never answered ARP, as the neighbour table shows it (FAILED). */
  | { kind: 'neighbour'; neighbour: string; state: string }
  /** A bridge does not send a frame back out the port it came in on: the destination MAC is behind that port (its FDB), whose hairpin mode is off. */
  | { kind: 'hairpin-off'; bridge: string; port: string; mac: string }
  /**
   * IP_RPFILTER: the reverse path check of the interface the packet came in on. `all` and `iface` are
   * net.ipv4.conf.{all,IFACE}.rp_filter (the kernel uses the higher); `route` is the route back to the
   * packet's source as `lookup` printed it (`via`, `dev`), or why there is none.
   */
  /**
   * IP_INADDRERRORS in ip_error: the interface the packet came in on does not forward (net.ipv4.ip_forward 0 sets
   * every interface's `forwarding` to 0). `ipForward` and `ifaceForwarding` as sysctl read them at the drop.
   */
  | { kind: 'forwarding-off'; iface: string; ipForward: number; ifaceForwarding: number }
  /** NO_SOCKET of a TCP SYN: nothing listens on its port; `listening` is what does, as `ss -Htln` listed it at the drop. */
  | { kind: 'no-listener'; port: number; listening: string[] }
  | {
      kind: 'rp-filter';
      iface: string;
      all: number;
      ifaceValue: number;
      lookup: string;
      route: { text: string; dev?: string; error?: string };
    };

/** Facts read once the probe is over, only when it did not end well: what a packet's path depended on. */
export type TraceFact =
  | { kind: 'setting'; node: string; name: string; value: string }
  /** The node's main routing table as `ip -4 route show` prints it. */
  | { kind: 'routes'; node: string; table: string }
  /** A built-in chain of the filter table, its policy and the packets the policy took (`Chain FORWARD (policy DROP 3 packets, ...)`). */
  | { kind: 'policy'; node: string; chain: string; policy: string; packets: number; line: string }
  | { kind: 'tc-program'; node: string; dev: string; hook: 'ingress' | 'egress'; name: string; id: number }
  /** A cgroup program in attach (= run) order; `mappings` are the service entries its own maps hold. */
  | {
      kind: 'cgroup-program';
      node: string;
      cgroup: string;
      attach: string;
      order: number;
      of: number;
      name: string;
      id: number;
      pinned?: string;
      mappings: { frontend: string; backends: string[] }[];
    };

export interface TraceFlows {
  /** The probing pod and its address. */
  clientPod: string;
  client: string;
  /** Where the probe sends: the service/pod/host address (and port). */
  target: { ip: string; port: number };
}

export interface ProbeTraceResult {
  /** Wall clock (epoch ms) at `at` = 0, to line events up with packet captures. */
  startedAt?: number;
  /** The addresses traced. */
  flows?: TraceFlows;
  events: TraceEvent[];
  facts: TraceFact[];
  /** Parts of the trace that could not run here, with why (e.g. no BPF tracing: drop reasons missing). */
  unavailable: string[];
  /** What the trace cost, ms: the lab's monitors (first probe only), set-up, teardown (rules removed, monitors flushed), reading the facts. */
  costMs: { lab?: number; start: number; stop: number; facts?: number };
}

export interface ProbeTraceSession {
  /** Called once, when a packet the client sent is dropped for a reason that repeats for every retransmission. */
  onDrop(listener: (drop: Extract<TraceEvent, { kind: 'rule' | 'drop' }>) => void): void;
  /** Removes every trace rule; with `facts`, also reads what the path depended on (for a probe that did not end well). */
  stop(options?: { facts?: boolean }): Promise<ProbeTraceResult>;
}
