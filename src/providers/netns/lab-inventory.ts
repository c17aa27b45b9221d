// What provisioning made of each part of a netns lab, recorded as it makes it: addresses, the pods'
// host-side interfaces, the nodes' fabric ports, bpffs holders and socket-LB cgroups, Cilium endpoints,
// helper programs and the pod agent. Provisioning holds the inventory and records into it through named
// methods; the lab it hands out only reads it (ReadonlyLabInventory).
import { packagePath } from '../../model/package-root.ts';
import type { TopologySpec } from '../../model/scenario-schema.ts';
import type { CniResult } from './cni-plugin.ts';

/** A pod on its routed lxc veth (cilium shape), for the BPF masquerade map. */
export interface CiliumEndpoint {
  ip: string;
  lxc: string;
  lxcMac: string;
  podMac: string;
}

/** A pod's sandbox as its node's CNI chain made it: each plugin's config as called, and the result after each that ran. */
export interface PodNetwork {
  readonly configs: readonly Record<string, unknown>[];
  readonly results: readonly CniResult[];
}

/** A helper program built for the lab (`{bin/inject-ahead}`), or why it could not be built. */
export interface HelperBuild {
  path?: string;
  error?: string;
}

/** pod-agent.mjs, as real clusters run it: the lab's fallback, and what test/lab/native-agent.test.ts compares the native agent with. */
export const NODE_AGENT_COMMAND: readonly string[] = ['node', packagePath('src/providers/netns/agent/pod-agent.mjs')];

/** What a lab reads of its inventory. */
export interface ReadonlyLabInventory {
  /** `pod/x`, `svc/y`, `node/z`, `host/h` -> its IPv4 address. */
  address(ref: string): string | undefined;
  /** The pod's host-side interface (veth on cni0, or lxc*), for shaping and captures. */
  podInterface(pod: string): string | undefined;
  /** The node's port on the fabric bridge (n0, n1, ...), for captures of the node network. */
  fabricPort(node: string): string | undefined;
  /** /proc/PID/ns/mnt of the node's bpffs holder (cilium shape). */
  bpffsHolder(node: string): string | undefined;
  /** The cgroup v2 directory the node's pods run in (socket LB). */
  socketLbCgroup(node: string): string | undefined;
  ciliumEndpoint(pod: string): CiliumEndpoint | undefined;
  /** The pod's sandbox as its node's CNI chain made it (bridge and flannel shapes): what a DEL goes through. */
  podNetwork(pod: string): PodNetwork | undefined;
  helper(name: string): HelperBuild | undefined;
  /** The native agent (agent/pod-agent.c) once built, else pod-agent.mjs. */
  readonly agentCommand: readonly string[];
}

export class LabInventory implements ReadonlyLabInventory {
  private readonly addresses = new Map<string, string>();
  private readonly podInterfaces = new Map<string, string>();
  private readonly fabricPorts = new Map<string, string>();
  private readonly bpffsHolders = new Map<string, string>();
  private readonly socketLbCgroups = new Map<string, string>();
  private readonly ciliumEndpoints = new Map<string, CiliumEndpoint>();
  private readonly podNetworks = new Map<string, PodNetwork>();
  private readonly helpers = new Map<string, HelperBuild>();
  private agent: readonly string[] = NODE_AGENT_COMMAND;

  /** Services have their addresses from the start: their ClusterIPs. */
  constructor(topology: TopologySpec) {
    // a headless Service has no address of its own
    for (const s of topology.services) if (s.clusterIP !== 'None') this.addresses.set(`svc/${s.name}`, s.clusterIP);
    for (const s of topology.services) if (s.loadBalancerIP) this.addresses.set(`lb/${s.name}`, s.loadBalancerIP);
  }

  address(ref: string): string | undefined {
    return this.addresses.get(ref);
  }

  podInterface(pod: string): string | undefined {
    return this.podInterfaces.get(pod);
  }

  fabricPort(node: string): string | undefined {
    return this.fabricPorts.get(node);
  }

  bpffsHolder(node: string): string | undefined {
    return this.bpffsHolders.get(node);
  }

  socketLbCgroup(node: string): string | undefined {
    return this.socketLbCgroups.get(node);
  }

  ciliumEndpoint(pod: string): CiliumEndpoint | undefined {
    return this.ciliumEndpoints.get(pod);
  }

  podNetwork(pod: string): PodNetwork | undefined {
    return this.podNetworks.get(pod);
  }

  helper(name: string): HelperBuild | undefined {
    return this.helpers.get(name);
  }

  get agentCommand(): readonly string[] {
    return this.agent;
  }

  /** A node's or host's address on the fabric. */
  recordAddress(ref: string, ip: string): void {
    this.addresses.set(ref, ip);
  }

  recordFabricPort(node: string, port: string): void {
    this.fabricPorts.set(node, port);
  }

  /** A pod with its address, and the host side of its interface when the plugin reported one. */
  recordPod(pod: string, ip: string, hostInterface: string | undefined): void {
    this.addresses.set(`pod/${pod}`, ip);
    if (hostInterface) this.podInterfaces.set(pod, hostInterface);
  }

  /** A pod on its lxc veth (cilium shape): its endpoint, address and host-side interface. */
  recordCiliumEndpoint(pod: string, endpoint: CiliumEndpoint): void {
    this.ciliumEndpoints.set(pod, endpoint);
    this.recordPod(pod, endpoint.ip, endpoint.lxc);
  }

  /** The pod's sandbox after a plugin of its chain ran. */
  recordPodNetwork(pod: string, network: PodNetwork): void {
    this.podNetworks.set(pod, network);
  }

  /** A DEL went through the pod's whole chain: it has no sandbox until the next ADD. */
  forgetPodNetwork(pod: string): void {
    this.podNetworks.delete(pod);
  }

  recordBpffsHolder(node: string, mountNamespace: string): void {
    this.bpffsHolders.set(node, mountNamespace);
  }

  recordSocketLbCgroup(node: string, cgroup: string): void {
    this.socketLbCgroups.set(node, cgroup);
  }

  recordHelper(name: string, build: HelperBuild): void {
    this.helpers.set(name, build);
  }

  /** The native agent was built: pods and probes run it from now on. */
  useNativeAgent(path: string): void {
    this.agent = [path];
  }
}
