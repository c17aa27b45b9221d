// A pod's network through its node's CNI chain, called the way a kubelet's runtime (libcni) calls a
// network config list: ADD plugin by plugin in order, each chained plugin given the previous one's result
// as prevResult and, if it declares the capability, the runtime's arguments as runtimeConfig (portmap:
// `portMappings` from the pod's hostPorts, protocols lower-cased as CRI runtimes hand them over); DEL in
// reverse order with the same configs and the cached result.
import { HarnessError } from '../../model/errors.ts';
import { DEFAULT_CNI_CHAIN } from '../../model/primitives.ts';
import type { TopologySpec } from '../../model/scenario-schema.ts';
import { bridgeConflist } from '../../dataplane/bridge-conflist.ts';
import { FLANNEL_MTU } from '../../dataplane/flannel-entries.ts';
import { invokeCni } from './cni-plugin.ts';
import type { NetnsLab } from './netns-lab.ts';

type PodSpec = TopologySpec['pods'][number];

/** Every plugin's config for this pod, as libcni builds it from the node's conflist as it is now. */
function pluginConfigs(lab: NetnsLab, pod: PodSpec): Record<string, unknown>[] {
  const node = lab.topology.nodes.find((n) => n.name === pod.node)!;
  const conflist = bridgeConflist(node.podCIDR, {
    ipamDir: `${lab.names.stateDir}/ipam/${node.name}`,
    // flannel hands the bridge plugin the VXLAN-reduced MTU
    ...(lab.topology.cni === 'flannel' ? { mtu: FLANNEL_MTU } : {}),
    chain: node.cniChain ?? DEFAULT_CNI_CHAIN,
  });
  const portMappings = (pod.hostPorts ?? []).map((h) => ({
    hostPort: h.hostPort,
    containerPort: h.containerPort,
    protocol: h.protocol.toLowerCase(),
  }));
  return conflist.plugins.map((plugin) => ({
    cniVersion: conflist.cniVersion,
    name: conflist.name,
    ...plugin,
    ...(plugin.capabilities && portMappings.length > 0 ? { runtimeConfig: { portMappings } } : {}),
  }));
}

function invocation(lab: NetnsLab, pod: PodSpec, command: 'ADD' | 'DEL', config: Record<string, unknown>) {
  const ns = lab.names.pod(pod.name);
  return invokeCni({
    command,
    nodeNetnsPath: lab.names.netnsPath(lab.names.node(pod.node)),
    podNetnsPath: lab.names.netnsPath(ns),
    containerId: ns,
    commands: lab.commands,
    ifName: 'eth0',
    config,
  });
}

/**
 * The chain's first plugin (bridge): the pod's eth0 on cni0 and its address from host-local. The lab runs it
 * before the node boots, as kube-proxy's rules need the pods' addresses; the rest of the chain runs after.
 */
export async function addPodInterface(lab: NetnsLab, pod: PodSpec): Promise<void> {
  const configs = pluginConfigs(lab, pod);
  const result = await invocation(lab, pod, 'ADD', configs[0]!);
  const ip = result.ips?.[0]?.address.split('/')[0];
  if (!ip)
    throw new HarnessError('LAB_FAILED', `CNI ${String(configs[0]!.type)} returned no address for pod ${pod.name}`);
  lab.addresses.set(`pod/${pod.name}`, ip);
  const hostSide = result.interfaces?.find((i) => !i.sandbox && i.name !== 'cni0');
  if (hostSide) lab.hostInterfaces.set(pod.name, hostSide.name);
  lab.podNetworks.set(pod.name, { configs, results: [result] });
}

/**
 * The rest of the chain (portmap), each plugin given the result before it; after the node's boot, which
 * empties the tables portmap writes to, and again after a reboot, as a runtime sets its sandboxes up anew.
 * portmap without mappings returns its prevResult untouched (plugins/meta/portmap main.go cmdAdd at
 * v1.1.1), so the lab calls it at boot only for pods with hostPorts.
 */
export async function addChainedPlugins(lab: NetnsLab, pod: PodSpec): Promise<void> {
  const network = lab.podNetworks.get(pod.name);
  if (!network) throw new HarnessError('LAB_FAILED', `pod ${pod.name} has no interface to chain plugins onto`);
  network.results.length = 1;
  for (const config of network.configs.slice(1))
    network.results.push(await invocation(lab, pod, 'ADD', { ...config, prevResult: network.results.at(-1) }));
}

/** DEL through the chain the pod's sandbox was made with, last plugin first, each given the chain's result. */
export async function deletePodNetwork(lab: NetnsLab, pod: PodSpec): Promise<void> {
  const network = lab.podNetworks.get(pod.name);
  if (!network) return;
  const ran = network.configs.slice(0, network.results.length);
  for (const config of ran.reverse())
    await invocation(lab, pod, 'DEL', { ...config, prevResult: network.results.at(-1) });
  lab.podNetworks.delete(pod.name);
}

/** The pod's sandbox made again through its node's chain as it is now: DEL, then ADD (a new address). */
export async function recreatePodNetwork(lab: NetnsLab, pod: PodSpec): Promise<void> {
  await deletePodNetwork(lab, pod);
  await addPodInterface(lab, pod);
  await addChainedPlugins(lab, pod);
}
