// Builds a lab from a topology as an ordered list of actions. On any failure (or abort) the lab
// is destroyed before the error is re-thrown, so a failed start never leaves anything behind.
import { BE_LIBERAL, readBeLiberal } from './kube-proxy-sync.ts';
import { mkdir, writeFile } from 'node:fs/promises';
import { HarnessError } from '../../model/errors.ts';
import type { TopologySpec } from '../../model/scenario-schema.ts';
import type { PodPlacement } from '../../contract/kube-objects.ts';
import type { LabAction, RunContext, Target } from '../../contract/provider.ts';
import {
  attachedHooks,
  attachSocketLb,
  createCiliumEndpoints,
  createSocketLbCgroup,
  detachSocketLb,
  loadCiliumDatapath,
  loadSocketLb,
} from './cilium-datapath.ts';
import { invokeCni } from './cni-plugin.ts';
import { changeCniChain } from './cni-chain-change.ts';
import { deletePod } from './pod-delete.ts';
import { applyOps } from '../../dataplane/iptables-ops.ts';
import { KUBE_PROXY_SYSCTLS } from '../../dataplane/kube-proxy-sysctls.ts';
import { nodeSysctls, sysctlName } from './node-sysctls.ts';
import { bootOps, bootOrder, componentStart, type NodeFacts } from '../../dataplane/node-iptables.ts';
import { labNames, type LabNames } from '../namespaces/lab-names.ts';
import { ipBatch } from '../namespaces/namespace-batch.ts';
import { LabInventory } from './lab-inventory.ts';
import { NetnsLab } from './netns-lab.ts';
import { changeServices } from './service-change.ts';
import { restoreCaptured } from './restore-captured.ts';
import { flannelDevice, flannelPeerEntries, vtepMac, type FlannelNode } from '../../dataplane/flannel-entries.ts';
import { startLabCommands } from './native-commands.ts';
import { helperBinary, HELPERS } from '../namespaces/helper-build.ts';
import { fastNeighbourFailure } from './neighbour-timing.ts';
import { defaultGateway, FABRIC_GATEWAY, FABRIC_NET, nodeAddress } from '../../dataplane/node-network.ts';
import { awaitedLater } from '../../contract/awaited-later.ts';
import { settleAll } from '../../contract/settle-all.ts';
import { agentProgramArgv } from '../../contract/agent-program.ts';

/** The network joining nodes and external hosts, inside the fabric namespace only (kind's docker network uses the same). */
const READY_TIMEOUT_MS = 5000;

export async function provisionNetnsLab(topology: TopologySpec, run: RunContext): Promise<NetnsLab> {
  const names = labNames(run.runId);
  const commands = await startLabCommands();
  // provisioning records into the inventory; the lab it returns only reads it
  const inventory = new LabInventory(topology);
  const lab = new NetnsLab({ names, topology, inventory, perform: performAction, commands });
  const steps = new ProvisionSteps(lab, run);
  let programs: Promise<void> | undefined;
  try {
    await steps.step('state directory', () => writeStateDirectory(names));
    await steps.step('namespaces', () =>
      lab.createNamespaces([
        names.fabric,
        ...topology.nodes.map((n) => names.node(n.name)),
        ...topology.hosts.map((h) => names.host(h.name)),
        ...topology.pods.map((p) => names.pod(p.name)),
      ]),
    );
    lab.tracer.startMonitors(); // probe trace: the drop filter, the monitors and the TRACE rules get ready while the lab is wired
    // From here independent work runs side by side. The pods' programs need only their namespace
    // (and, with socket LB, their node's cgroup, made first): they start now and are awaited last.
    // A node's pods need its sysctls and theirs, not the fabric; the fabric needs nothing.
    if (topology.cni === 'cilium') for (const n of topology.nodes) await createSocketLbCgroup(lab, inventory, n.name);
    programs = awaitedLater(startPrograms(lab, inventory, run));
    const sysctls = new EarlySysctls(lab);
    await wireMachinesAndPods(steps, sysctls, inventory);
    await steps.step('cluster DNS records', () => lab.writeDnsRecords());
    if (topology.cni === 'cilium')
      await steps.step('cilium datapath: BPF masquerade, socket LB', () =>
        steps.eachNode((n) => loadCiliumDatapath(lab, topology, n)),
      );
    await steps.step('helper programs', () => buildHelpers(inventory));
    await bootNodes(steps, sysctls);
    if (lab.serviceHealth.wanted)
      await steps.step("kube-proxy's service health checks", () =>
        steps.eachNode((n) => lab.serviceHealth.sync(n, podPlacements(lab, lab.topology))),
      );
    // a captured node's tables hold the hostPorts portmap wrote there
    const captured = topology.nodes.some((n) => n.captured);
    if (topology.cni !== 'cilium' && !captured && topology.pods.some((p) => p.hostPorts)) await chainHostPorts(steps);
    lab.tracer.prepare(); // probe trace: conntrack's part, now that the node has booted, while the pods get ready
    await steps.step('pod programs ready', () => programs!);
    return lab;
  } catch (e) {
    await lab.tracer.settle(); // nothing of the trace may still be starting behind the teardown
    await lab.destroy();
    await programs?.catch(() => {});
    throw e;
  }
}

/** The steps of one provisioning: each logged with its time, none started once the run is aborted. */
class ProvisionSteps {
  constructor(
    readonly lab: NetnsLab,
    private readonly run: RunContext,
  ) {}

  async step(what: string, action: () => Promise<unknown>): Promise<void> {
    if (this.run.signal.aborted) throw new HarnessError('ABORTED', `aborted before: ${what}`);
    const started = performance.now();
    await action();
    this.run.log(`${what} (${Math.round(performance.now() - started)} ms)`);
  }

  /** `f` on every node side by side, settled before it throws. */
  eachNode(f: (node: string) => Promise<void>): Promise<void> {
    return settleAll(this.lab.topology.nodes.map((n) => f(n.name)));
  }
}

/**
 * The sysctls of every node's and pod's namespace, set side by side from the start (each node's
 * `early` ones, with be_liberal read back where they were set); a node's pods wait for its and theirs.
 */
class EarlySysctls {
  /** Per namespace: the values read back where its sysctls were set. */
  private readonly set: Map<string, Promise<Map<string, string>>>;

  constructor(private readonly lab: NetnsLab) {
    const { names, topology } = lab;
    this.set = new Map([
      ...topology.nodes.map(
        (n) =>
          [
            names.node(n.name),
            awaitedLater(lab.namespaceSysctls(names.node(n.name), nodeSysctls(n, topology).early, [BE_LIBERAL])),
          ] as const,
      ),
      ...topology.pods.map((p) => [names.pod(p.name), awaitedLater(lab.namespaceSysctls(names.pod(p.name)))] as const),
    ]);
  }

  /** The node's sysctls and its pods' are set. */
  ready(node: string): Promise<unknown> {
    const { names, topology } = this.lab;
    return Promise.all([
      this.set.get(names.node(node)),
      ...topology.pods.filter((p) => p.node === node).map((p) => this.set.get(names.pod(p.name))),
    ]);
  }

  /** be_liberal as kube-proxy reads it at boot: read where the node's sysctls were set (nothing else sets it since). */
  async beLiberal(node: string): Promise<string | undefined> {
    return (await this.set.get(this.lab.names.node(node))!).get(BE_LIBERAL);
  }
}

async function writeStateDirectory(names: LabNames): Promise<void> {
  await mkdir(`${names.stateDir}/ipam`, { recursive: true });
  await writeFile(
    `${names.stateDir}/owner.json`,
    JSON.stringify({ pid: process.pid, started: new Date().toISOString() }),
  );
}

/** The fabric and the machines on it, and beside them each node's pods, once their sysctls are set. */
async function wireMachinesAndPods(
  steps: ProvisionSteps,
  sysctls: EarlySysctls,
  inventory: LabInventory,
): Promise<void> {
  const { lab } = steps;
  const topology = lab.topology;
  const machines = createMachines(lab, inventory);
  await settleAll([
    // settled here as well: a step refused at an abort must not leave the wiring running behind the teardown
    machines.done,
    steps.step('fabric, node and host addresses, routes between nodes', () => machines.done),
    topology.cni === 'cilium'
      ? // after the node's eth0, as a real node's NIC precedes cilium_host: the kernel's ICMP errors out of an
        // address-less lxc device take the first device's address, the node IP, not cilium_host's (in either order at random before)
        steps.step('cilium endpoints: lxc pods', () =>
          steps.eachNode(
            async (n) => (await sysctls.ready(n), await machines.links, createCiliumEndpoints(lab, inventory, n)),
          ),
        )
      : steps.step('pods via CNI bridge', () =>
          steps.eachNode(async (n) => (await sysctls.ready(n), createBridgePods(lab, topology, n))),
        ),
  ]);
}

/**
 * A fresh node boots: FORWARD policy as set at boot, then the components in the topology's order. Every
 * device of the node exists by now: its neighbour timing is set beside the boot (neighbour-timing.ts).
 */
async function bootNodes(steps: ProvisionSteps, sysctls: EarlySysctls): Promise<void> {
  const { lab } = steps;
  const topology = lab.topology;
  // a replay's nodes boot nothing: each gets its captured state back, verbatim (restore-captured.ts)
  const replay = topology.nodes.every((n) => n.captured);
  await steps.step(
    replay ? 'captured state: iptables, routes, rules, conntrack' : `boot: ${bootOrder(topology).join(', ')}`,
    () =>
      steps.eachNode(async (n) => {
        const node = topology.nodes.find((x) => x.name === n)!;
        const captured = node.captured;
        // settings of devices the node's pods brought (cni0), before anything starts
        const afterPods = Object.entries(nodeSysctls(node, topology).afterPods);
        if (afterPods.length > 0)
          await lab.node(n).exec(['sysctl', '-q', '-w', ...afterPods.map(([k, v]) => `${sysctlName(k)}=${v}`)]);
        return settleAll([
          captured
            ? restoreCaptured(lab, n, captured)
            : applyOps(lab.node(n), bootOps(topology, n, factsWith(lab, await sysctls.beLiberal(n)))),
          fastNeighbourFailure(lab.node(n)),
        ]);
      }),
  );
}

/** Portmap after the bridge for the pods with hostPorts; a runtime removes a sandbox through its chain, so portmap takes its rules out of the node's tables. */
async function chainHostPorts(steps: ProvisionSteps): Promise<void> {
  const { lab } = steps;
  for (const pod of lab.topology.pods.filter((p) => p.hostPorts))
    lab.atTeardown(`CNI DEL of pod ${pod.name}`, () => lab.sandboxes.delete(pod));
  await steps.step('CNI chain after bridge: portmap for hostPorts', () =>
    steps.eachNode((n) => chainHostPortPods(lab, n)),
  );
}

/** A node or host on the fabric: its namespace, its port on the fabric's bridge, its address. */
interface FabricMachine {
  ns: string;
  /** The bridge's side of its veth (`n0`, `h0`). */
  port: string;
  ip: string;
  /** `node/NAME` or `host/NAME`. */
  ref: string;
  /** A node's spec; hosts have none. */
  node?: TopologySpec['nodes'][number];
  /** Its index among the fabric's machines: nodes first, in topology order, then hosts. */
  index: number;
}

/**
 * The fabric bridge with a veth per node and host (created from the fabric side, the peer placed
 * straight into its namespace: nothing ever appears in the root namespace), then each node's and
 * host's address, its routes to the other nodes' pod networks (or flannel's VXLAN), and sysctls.
 * `links`: the veths exist (each node's eth0, its first device); `done`: everything is wired.
 */
function createMachines(lab: NetnsLab, inventory: LabInventory): { links: Promise<void>; done: Promise<void> } {
  const topology = lab.topology;
  const machines = fabricMachines(lab);
  for (const m of machines) inventory.recordAddress(m.ref, m.ip);
  for (const [i, node] of topology.nodes.entries()) inventory.recordFabricPort(node.name, `n${i}`);
  // the gateway forwards nothing, whatever the host's own ip_forward (which a new namespace inherits) says
  const fabricAndHostSysctls = awaitedLater(
    Promise.all([
      lab.namespaceSysctls(lab.names.fabric, { 'net.ipv4.ip_forward': 0 }),
      ...topology.hosts.map((h) => lab.namespaceSysctls(lab.names.host(h.name))),
    ]),
  );
  const links = ipBatch(lab.names.fabric, fabricLinks(machines), lab.commands);
  const flannel = flannelNodes(lab);
  const wire = () => settleAll([fabricAndHostSysctls, ...machines.map((m) => wireMachine(lab, m, flannel))]);
  // the wiring starts once the links exist; `links` is awaited by the cilium step, its failure comes from `done`
  return { links: awaitedLater(links), done: links.then(wire) };
}

/** Every node as flanneld knows it: its pod subnet, its address and its VTEP's MAC (stable across restarts). */
function flannelNodes(lab: NetnsLab): FlannelNode[] {
  return lab.topology.nodes.map((n, i) => ({
    name: n.name,
    podCIDR: n.podCIDR,
    nodeIP: lab.address(`node/${n.name}`),
    vtepMac: vtepMac(i + 1),
  }));
}

/**
 * What a (re)started flanneld writes besides its rules: its VTEP when it is gone (a reboot took it), and the
 * route, neighbour and FDB entry of every other node's lease, over whatever is left of them.
 */
async function startFlannelNetwork(lab: NetnsLab, nodeName: string): Promise<void> {
  const all = flannelNodes(lab);
  const self = all.find((n) => n.name === nodeName)!;
  const ns = lab.names.node(nodeName);
  const device = await lab.node(nodeName).exec(['ip', 'link', 'show', 'flannel.1'], { reject: false });
  const entries = flannelPeerEntries(self, all, device.exitCode === 0);
  await ipBatch(ns, [...(device.exitCode === 0 ? [] : flannelDevice(self)), ...entries.ip], lab.commands);
  if (entries.bridge.length > 0)
    await lab.commands.exec(['bridge', '-n', ns, '-batch', '-'], { input: `${entries.bridge.join('\n')}\n` });
}

function fabricMachines(lab: NetnsLab): FabricMachine[] {
  const { names, topology } = lab;
  return [
    ...topology.nodes.map((node, i) => ({
      ns: names.node(node.name),
      port: `n${i}`,
      ip: nodeAddress(topology.nodes, node.name)!,
      ref: `node/${node.name}`,
      node,
      index: i,
    })),
    // outside the cluster: on the nodes' network, with no route back to the pod network
    ...topology.hosts.map((host, i) => ({
      ns: names.host(host.name),
      port: `h${i}`,
      ip: `${FABRIC_NET}.${100 + i}`,
      ref: `host/${host.name}`,
      index: topology.nodes.length + i,
    })),
  ];
}

/** The fabric's bridge, at the nodes' default gateway (its own address: node-network.ts), with a veth to every machine. */
function fabricLinks(machines: FabricMachine[]): string[] {
  const fabric: string[] = [
    'link set lo up',
    'link add br0 type bridge',
    `addr add ${FABRIC_GATEWAY}/24 dev br0`,
    'link set br0 up',
  ];
  for (const m of machines)
    fabric.push(
      `link add ${m.port} type veth peer name eth0 netns ${m.ns}`,
      `link set ${m.port} master br0`,
      `link set ${m.port} up`,
    );
  return fabric;
}

/** A machine's address and default route; a node's routes to the other nodes' pods (or flannel's entries) and late sysctls. */
async function wireMachine(lab: NetnsLab, m: FabricMachine, flannel: FlannelNode[]): Promise<void> {
  const topology = lab.topology;
  const lines = ['link set lo up', `addr add ${m.ip}/24 dev eth0`, 'link set eth0 up'];
  const node = m.node;
  const gateway = node && defaultGateway(node.defaultRoute, (ref) => lab.address(ref));
  if (gateway) lines.push(`route add default via ${gateway} dev eth0`);
  if (node && topology.cni === 'flannel') {
    // flannel's vxlan backend: the VTEP, then the routes, neighbours and FDB entries flanneld writes for its peers
    const self = flannel[m.index]!;
    const entries = flannelPeerEntries(self, flannel);
    lines.push(...flannelDevice(self), ...entries.ip);
    await ipBatch(m.ns, lines, lab.commands);
    if (entries.bridge.length > 0)
      await lab.commands.exec(['bridge', '-n', m.ns, '-batch', '-'], { input: `${entries.bridge.join('\n')}\n` });
  } else if (node) {
    const others = topology.nodes.filter((other) => other.name !== node.name);
    lines.push(
      ...others.map((other) => `route add ${other.podCIDR} via ${lab.address(`node/${other.name}`)} dev eth0`),
    );
    await ipBatch(m.ns, lines, lab.commands);
  } else {
    await ipBatch(m.ns, lines, lab.commands);
  }
  const late = node ? nodeSysctls(node, topology).late : {};
  if (Object.keys(late).length > 0)
    await lab
      .namespaceTarget(m.ns)
      .exec(['sysctl', '-q', '-w', ...Object.entries(late).map(([k, v]) => `${sysctlName(k)}=${v}`)]);
}

async function createBridgePods(lab: NetnsLab, topology: TopologySpec, nodeName: string): Promise<void> {
  const nodePath = lab.names.netnsPath(lab.names.node(nodeName));
  const pods = topology.pods.filter((p) => p.node === nodeName);
  // the loopback plugin brings lo up, as for every pod a kubelet starts; it takes no address, so all at once
  const loopbacks = awaitedLater(
    settleAll(
      pods.map((p) =>
        invokeCni({
          command: 'ADD',
          nodeNetnsPath: nodePath,
          podNetnsPath: lab.names.netnsPath(lab.names.pod(p.name)),
          containerId: lab.names.pod(p.name),
          commands: lab.commands,
          ifName: 'lo',
          config: { cniVersion: '1.0.0', name: 'netrepro-lo', type: 'loopback' },
        }),
      ),
    ),
  );
  // the bridge plugin sequentially: host-local hands out addresses in pod order, so runs are reproducible
  for (const pod of pods) await lab.sandboxes.addInterface(pod);
  await loopbacks;
}

/** The rest of the CNI chain (portmap) for the node's pods with hostPorts, once its boot has emptied its tables. */
async function chainHostPortPods(lab: NetnsLab, nodeName: string): Promise<void> {
  for (const pod of lab.topology.pods.filter((p) => p.node === nodeName && p.hostPorts))
    await lab.sandboxes.addChainedPlugins(pod);
}

/** What kube-proxy sets in the kernel when it (re)starts, after its rules. */
async function ensureKubeProxySysctls(node: Target): Promise<void> {
  await node.exec(['sysctl', '-q', '-w', ...Object.entries(KUBE_PROXY_SYSCTLS).map(([k, v]) => `${k}=${v}`)]);
}

/** Helper programs commands may name as `{bin/NAME}`; a missing compiler only matters to scenarios that use them. */
async function buildHelpers(inventory: LabInventory): Promise<void> {
  const bins = HELPERS.map(async (name) => {
    try {
      inventory.recordHelper(name, { path: await helperBinary(name) });
    } catch (e) {
      inventory.recordHelper(name, { error: (e as Error).message.split('\n')[0] });
    }
  });
  await Promise.all(bins);
}

export function podPlacements(lab: NetnsLab, topology: TopologySpec): Map<string, PodPlacement> {
  return new Map(topology.pods.map((p) => [p.name, { ip: lab.address(`pod/${p.name}`), node: p.node }]));
}

/** What the node's components read at start: pod placements, be_liberal (kube-proxy >= 1.29 reads it then), no nfacct counters (no nfacct tool here). */
async function nodeFacts(lab: NetnsLab, nodeName: string): Promise<NodeFacts> {
  return factsWith(lab, (await readBeLiberal(lab.node(nodeName))) ? '1' : '0');
}

/** `beLiberal`: the value read back where the node's sysctls were set at boot (one process less per node), or by nodeFacts. */
function factsWith(lab: NetnsLab, beLiberal: string | undefined): NodeFacts {
  if (beLiberal === undefined) throw new HarnessError('LAB_FAILED', `${BE_LIBERAL} could not be read`);
  return { placements: podPlacements(lab, lab.topology), beLiberal: beLiberal === '1', nfacctCounters: false };
}

async function performAction(lab: NetnsLab, action: LabAction): Promise<void> {
  if (action.kind === 'endpoint' || action.kind === 'service')
    return changeServices(lab, action, podPlacements(lab, lab.topology));
  if (action.kind === 'delete') return deletePod(lab, action.pod, podPlacements(lab, lab.topology));
  const node = lab.node(action.node);
  switch (action.kind) {
    case 'start':
      if (action.component !== 'kube-proxy' && action.component !== lab.topology.cni) {
        throw new HarnessError('UNSUPPORTED', `${action.component} runs only in the ${action.component} CNI shape`);
      }
      if (action.component === 'kube-proxy') {
        // a restart keeps what it does not change: the release and configuration the node ran
        const was = lab.kubeProxy(action.node);
        lab.kubeProxyStarted(action.node, { ...was, ...action.config, release: action.version ?? was.release });
      }
      await applyOps(
        node,
        componentStart(
          lab.topology,
          action.node,
          action.component,
          await nodeFacts(lab, action.node),
          lab.kubeProxy(action.node),
        ),
      );
      if (action.component === 'kube-proxy') await ensureKubeProxySysctls(node);
      if (action.component === 'flannel') await startFlannelNetwork(lab, action.node);
      return;
    case 'reboot': {
      // rules and conntrack go with the reboot, and flannel's VTEP with its routes, neighbours and FDB entries;
      // be_liberal is a sysctl the node keeps (set at boot from its config)
      await node.exec(['conntrack', '-F'], { reject: false });
      if (lab.topology.cni === 'flannel') await node.exec(['ip', 'link', 'del', 'flannel.1'], { reject: false });
      lab.nodeRebooted(action.node);
      await applyOps(node, bootOps(lab.topology, action.node, await nodeFacts(lab, action.node), action.order));
      if (bootOrder(lab.topology, action.order).includes('kube-proxy')) await ensureKubeProxySysctls(node);
      if (bootOrder(lab.topology, action.order).includes('flannel')) await startFlannelNetwork(lab, action.node);
      // the runtime sets the node's sandboxes up again: portmap writes the hostPorts anew
      if (lab.topology.cni !== 'cilium') await chainHostPortPods(lab, action.node);
      return;
    }
    case 'cni-chain':
      return changeCniChain(lab, action);
    case 'sock-lb-stale-program': {
      // the stale program was there before the current agent attached its own: it runs first (FIFO)
      const vip = lab.address(action.service);
      const [ip = '', port = '0'] = action.backend.split(':');
      const protocol = action.hook === 'sendmsg4' ? 'UDP' : 'TCP';
      await loadSocketLb(
        lab,
        action.node,
        'sock-stale',
        [{ vip, port: action.port, protocol, backends: [{ ip, port: Number(port) }] }],
        [],
      );
      const hooks = [action.hook] as const;
      if (!action.first) return attachSocketLb(lab, action.node, 'sock-stale', hooks);
      await detachSocketLb(lab, action.node, 'sock-current', hooks);
      await attachSocketLb(lab, action.node, 'sock-stale', hooks);
      await attachSocketLb(lab, action.node, 'sock-current', hooks);
      return;
    }
    case 'sock-lb-detach-stale':
      return detachSocketLb(lab, action.node, 'sock-stale', await attachedHooks(lab, action.node, 'sock-stale'));
  }
}

/**
 * The native pod agent (agent/pod-agent.c) spares a Node start (~0.1-0.2 s of CPU) per pod server and
 * per probe that runs the agent; where it cannot be built the lab runs pod-agent.mjs.
 */
async function useNativeAgent(inventory: LabInventory): Promise<void> {
  await helperBinary('pod-agent').then(
    (path) => inventory.useNativeAgent(path),
    () => {},
  );
}

async function startPrograms(lab: NetnsLab, inventory: LabInventory, run: RunContext): Promise<void> {
  const topology = lab.topology;
  await useNativeAgent(inventory);
  // the DNS programs read the lab's records file at each query, written once the pods have their
  // addresses (a headless Service's records are theirs); a Service or endpoint step rewrites it
  const records = [`--records=${lab.dnsRecordsFile}`];
  const machines = [
    ...topology.pods.map((p) => ({ name: p.name, serve: p.serve, target: () => lab.pod(p.name), pod: p.name })),
    ...topology.hosts.map((h) => ({ name: h.name, serve: h.serve, target: () => lab.host(h.name), pod: undefined })),
  ];
  const starts = machines.flatMap((m) =>
    (m.serve ?? []).map(async (program) => {
      const argv = agentProgramArgv(lab.agentCommand, program, m.name, records);
      const process = m.target().spawn(argv, { signal: run.signal });
      lab.track(process, m.pod);
      await process.waitFor(/^ready /, READY_TIMEOUT_MS);
    }),
  );
  await Promise.all(starts);
}
