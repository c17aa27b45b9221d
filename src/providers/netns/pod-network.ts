// A pod's network through its node's CNI chain, called the way a kubelet's runtime (libcni) calls a
// network config list: ADD plugin by plugin in order, each chained plugin given the previous one's result
// as prevResult and, if it declares the capability, the runtime's arguments as runtimeConfig (portmap:
// `portMappings` from the pod's hostPorts, as port-mappings.ts writes them); DEL in
// reverse order with the same configs and the cached result. The lab owns one PodSandboxes, which records
// each pod's address, host-side interface and sandbox in the lab's inventory.
import { HarnessError } from '../../model/errors.ts';
import { DEFAULT_CNI_CHAIN } from '../../model/primitives.ts';
import type { TopologySpec } from '../../model/scenario-schema.ts';
import type { CommandRunner } from '../../contract/command.ts';
import { bridgeConflist } from '../../dataplane/bridge-conflist.ts';
import { FLANNEL_MTU } from '../../dataplane/flannel-entries.ts';
import { portMappings } from '../../dataplane/port-mappings.ts';
import type { LabNames } from '../namespaces/lab-names.ts';
import { invokeCni } from './cni-plugin.ts';
import type { LabInventory } from './lab-inventory.ts';

type PodSpec = TopologySpec['pods'][number];

/** What the sandboxes read of their lab: its topology as it is now (a node's chain changes), names and runner. */
export interface SandboxedLab {
  readonly topology: TopologySpec;
  readonly names: LabNames;
  readonly commands: CommandRunner;
  /** A node's address, for a hostPort bound to it. */
  address(ref: string): string;
}

export class PodSandboxes {
  constructor(
    private readonly lab: SandboxedLab,
    /** Where each pod's address, host-side interface and sandbox are recorded. */
    private readonly inventory: LabInventory,
  ) {}

  /**
   * The chain's first plugin (bridge): the pod's eth0 on cni0 and its address from host-local. The lab runs it
   * before the node boots, as kube-proxy's rules need the pods' addresses; the rest of the chain runs after.
   */
  async addInterface(pod: PodSpec): Promise<void> {
    const configs = this.pluginConfigs(pod);
    const result = await this.invoke(pod, 'ADD', configs[0]!);
    const ip = result.ips?.[0]?.address.split('/')[0];
    if (!ip)
      throw new HarnessError('LAB_FAILED', `CNI ${String(configs[0]!.type)} returned no address for pod ${pod.name}`);
    const hostSide = result.interfaces?.find((i) => !i.sandbox && i.name !== 'cni0');
    this.inventory.recordPod(pod.name, ip, hostSide?.name);
    this.inventory.recordPodNetwork(pod.name, { configs, results: [result] });
  }

  /**
   * The rest of the chain (portmap), each plugin given the result before it; after the node's boot, which
   * empties the tables portmap writes to, and again after a reboot, as a runtime sets its sandboxes up anew.
   * portmap without mappings returns its prevResult untouched (plugins/meta/portmap main.go cmdAdd at
   * v1.1.1), so the lab calls it at boot only for pods with hostPorts.
   */
  async addChainedPlugins(pod: PodSpec): Promise<void> {
    const network = this.inventory.podNetwork(pod.name);
    if (!network) throw new HarnessError('LAB_FAILED', `pod ${pod.name} has no interface to chain plugins onto`);
    const { configs } = network;
    // recorded after each plugin: a DEL goes through the plugins that ran, also after one that failed
    let results = network.results.slice(0, 1);
    this.inventory.recordPodNetwork(pod.name, { configs, results });
    for (const config of configs.slice(1)) {
      results = [...results, await this.invoke(pod, 'ADD', { ...config, prevResult: results.at(-1) })];
      this.inventory.recordPodNetwork(pod.name, { configs, results });
    }
  }

  /** DEL through the chain the pod's sandbox was made with, last plugin first, each given the chain's result. */
  async delete(pod: PodSpec): Promise<void> {
    const network = this.inventory.podNetwork(pod.name);
    if (!network) return;
    const ran = network.configs.slice(0, network.results.length);
    for (const config of ran.reverse())
      await this.invoke(pod, 'DEL', { ...config, prevResult: network.results.at(-1) });
    this.inventory.forgetPodNetwork(pod.name);
  }

  /** The pod's sandbox made again through its node's chain as it is now: DEL, then ADD (a new address). */
  async recreate(pod: PodSpec): Promise<void> {
    await this.delete(pod);
    await this.addInterface(pod);
    await this.addChainedPlugins(pod);
  }

  /** Every plugin's config for this pod, as libcni builds it from the node's conflist as it is now. */
  private pluginConfigs(pod: PodSpec): Record<string, unknown>[] {
    const lab = this.lab;
    const node = lab.topology.nodes.find((n) => n.name === pod.node)!;
    const conflist = bridgeConflist(node.podCIDR, {
      ipamDir: `${lab.names.stateDir}/ipam/${node.name}`,
      // flannel hands the bridge plugin the VXLAN-reduced MTU
      ...(lab.topology.cni === 'flannel' ? { mtu: FLANNEL_MTU } : {}),
      chain: node.cniChain ?? DEFAULT_CNI_CHAIN,
    });
    const mappings = portMappings(pod, (ref) => lab.address(ref));
    return conflist.plugins.map((plugin) => ({
      cniVersion: conflist.cniVersion,
      name: conflist.name,
      ...plugin,
      ...(plugin.capabilities && mappings.length > 0 ? { runtimeConfig: { portMappings: mappings } } : {}),
      // the pod's own address asked of host-local (its `args.cni.ips`), as a runtime asks for a static one
      ...(plugin.type === 'bridge' && pod.ip ? { args: { cni: { ips: [pod.ip] } } } : {}),
    }));
  }

  private invoke(pod: PodSpec, command: 'ADD' | 'DEL', config: Record<string, unknown>) {
    const ns = this.lab.names.pod(pod.name);
    return invokeCni({
      command,
      nodeNetnsPath: this.lab.names.netnsPath(this.lab.names.node(pod.node)),
      podNetnsPath: this.lab.names.netnsPath(ns),
      containerId: ns,
      commands: this.lab.commands,
      ifName: 'eth0',
      config,
    });
  }
}
