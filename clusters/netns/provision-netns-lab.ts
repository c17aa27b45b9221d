// Builds a lab from a topology as an ordered list of actions. On any failure (or abort) the lab
// is destroyed before the error is re-thrown, so a failed start never leaves anything behind.
import { mkdir, writeFile } from 'node:fs/promises';
import { HarnessError } from '../../harness/model/errors.ts';
import type { TopologySpec } from '../../harness/model/scenario-schema.ts';
import type { PodPlacement } from '../kube-objects.ts';
import type { LabAction, RunContext } from '../provider.ts';
import { attachedHooks, attachSocketLb, detachSocketLb, loadSocketLb, provisionCiliumNode } from './cilium-datapath.ts';
import { invokeCni } from './cni-plugin.ts';
import { applyOps } from './iptables-ops.ts';
import { bootOps, bootOrder, componentStart, type NodeFacts } from './node-iptables.ts';
import { labNames } from './lab-names.ts';
import { ipBatch, NetnsLab } from './netns-lab.ts';
import { runCommand } from '../command.ts';
import { changeServices } from './service-change.ts';
import { flannelDevice, flannelPeerEntries, FLANNEL_MTU, vtepMac, type FlannelNode } from './flannel-entries.ts';
import { helperBinary, HELPERS } from './helper-build.ts';

/** The network joining nodes and external hosts, inside the fabric namespace only (kind's docker network uses the same). */
export const FABRIC_NET = '172.18.0';
const READY_TIMEOUT_MS = 5000;

export async function provisionNetnsLab(topology: TopologySpec, run: RunContext): Promise<NetnsLab> {
  const names = labNames(run.runId);
  const lab = new NetnsLab(names, topology);
  lab.actionHandler = performAction;
  const step = async (what: string, action: () => Promise<unknown>) => {
    if (run.signal.aborted) throw new HarnessError('ABORTED', `aborted before: ${what}`);
    const started = performance.now();
    await action();
    run.log(`${what} (${Math.round(performance.now() - started)} ms)`);
  };
  const eachNode = (f: (node: string) => Promise<void>) => Promise.all(topology.nodes.map((n) => f(n.name)));
  try {
    await step('state directory', async () => {
      await mkdir(`${names.stateDir}/ipam`, { recursive: true });
      await writeFile(`${names.stateDir}/owner.json`, JSON.stringify({ pid: process.pid, started: new Date().toISOString() }));
    });
    await step('fabric, nodes and hosts', () => createMachines(lab, topology));
    if (topology.cni === 'cilium') await step('cilium datapath: lxc pods, BPF masquerade, socket LB', () => eachNode((n) => provisionCiliumNode(lab, topology, n)));
    else await step('pods via CNI bridge', () => eachNode((n) => createBridgePods(lab, topology, n)));
    if (topology.cni === 'flannel') await step('flannel vxlan between nodes', () => flannelBetweenNodes(lab, topology));
    else await step('routes between nodes', () => routeBetweenNodes(lab, topology));
    if (topology.nodes.some((n) => n.defaultRoute)) await step('default routes on the fabric', () => defaultRoutes(lab, topology));
    await step('helper programs', () => buildHelpers(lab));
    // a fresh node boots: FORWARD policy as set at boot, then the components in the topology's order
    await step(`boot: ${bootOrder(topology).join(', ')}`, () => eachNode(async (n) => applyOps(lab.node(n), bootOps(topology, n, await nodeFacts(lab, n)))));
    await step('pod programs', () => startPrograms(lab, topology, run));
    return lab;
  } catch (e) {
    await lab.destroy();
    throw e;
  }
}

async function createMachines(lab: NetnsLab, topology: TopologySpec): Promise<void> {
  const fabric = lab.names.fabric;
  await lab.createNamespace(fabric);
  await ipBatch(fabric, ['link add br0 type bridge', 'link set br0 up']);
  const attach = async (ns: string, port: string, ip: string) => {
    await lab.createNamespace(ns);
    // created directly inside the namespaces: nothing ever appears in the root namespace
    await ipBatch(ns, [`link add eth0 type veth peer name ${port} netns ${fabric}`, `addr add ${ip}/24 dev eth0`, 'link set eth0 up']);
    await ipBatch(fabric, [`link set ${port} master br0`, `link set ${port} up`]);
  };
  await Promise.all([
    ...topology.nodes.map(async (node, i) => {
      const ip = `${FABRIC_NET}.${i + 2}`;
      await attach(lab.names.node(node.name), `n${i}`, ip);
      lab.addresses.set(`node/${node.name}`, ip);
      lab.fabricPorts.set(node.name, `n${i}`);
      const sysctls = { 'net.ipv4.ip_forward': 1, 'net.bridge.bridge-nf-call-iptables': 1, ...node.sysctls };
      await lab.node(node.name).exec(['sysctl', '-q', '-w', ...Object.entries(sysctls).map(([k, v]) => `${k}=${v}`)]);
    }),
    // outside the cluster: on the nodes' network, with no route back to the pod network
    ...topology.hosts.map(async (host, i) => {
      const ip = `${FABRIC_NET}.${100 + i}`;
      await attach(lab.names.host(host.name), `h${i}`, ip);
      lab.addresses.set(`host/${host.name}`, ip);
    }),
  ]);
}

async function createBridgePods(lab: NetnsLab, topology: TopologySpec, nodeName: string): Promise<void> {
  const node = topology.nodes.find((n) => n.name === nodeName)!;
  const nodePath = lab.names.netnsPath(lab.names.node(nodeName));
  // sequential per node: host-local hands out addresses in pod order, so runs are reproducible
  for (const pod of topology.pods.filter((p) => p.node === nodeName)) {
    const ns = lab.names.pod(pod.name);
    await lab.createNamespace(ns);
    const common = { command: 'ADD' as const, nodeNetnsPath: nodePath, podNetnsPath: lab.names.netnsPath(ns), containerId: ns };
    await invokeCni({ ...common, ifName: 'lo', config: { cniVersion: '1.0.0', name: 'netrepro-lo', type: 'loopback' } });
    const result = await invokeCni({
      ...common,
      ifName: 'eth0',
      config: {
        cniVersion: '1.0.0',
        name: 'netrepro',
        type: 'bridge',
        bridge: 'cni0',
        isGateway: true,
        ipMasq: false,
        hairpinMode: true,
        // flannel hands the bridge plugin the VXLAN-reduced MTU
        ...(topology.cni === 'flannel' ? { mtu: FLANNEL_MTU } : {}),
        ipam: { type: 'host-local', ranges: [[{ subnet: node.podCIDR }]], routes: [{ dst: '0.0.0.0/0' }], dataDir: `${lab.names.stateDir}/ipam/${nodeName}` },
      },
    });
    const ip = result.ips?.[0]?.address.split('/')[0];
    if (!ip) throw new HarnessError('LAB_FAILED', `CNI bridge returned no address for pod ${pod.name}`);
    lab.addresses.set(`pod/${pod.name}`, ip);
    const hostSide = result.interfaces?.find((i) => !i.sandbox && i.name !== 'cni0');
    if (hostSide) lab.hostInterfaces.set(pod.name, hostSide.name);
  }
}

async function routeBetweenNodes(lab: NetnsLab, topology: TopologySpec): Promise<void> {
  await Promise.all(
    topology.nodes.map((node) => {
      const routes = topology.nodes
        .filter((other) => other.name !== node.name)
        .map((other) => `route add ${other.podCIDR} via ${lab.address(`node/${other.name}`)} dev eth0`);
      return routes.length > 0 ? ipBatch(lab.names.node(node.name), routes) : Promise.resolve();
    }),
  );
}

/** `nodes[].defaultRoute`: the default route a real node has, via an external host on the nodes' network. */
async function defaultRoutes(lab: NetnsLab, topology: TopologySpec): Promise<void> {
  await Promise.all(topology.nodes.filter((n) => n.defaultRoute).map((n) => ipBatch(lab.names.node(n.name), [`route add default via ${lab.address(n.defaultRoute!)} dev eth0`])));
}

/** flannel's vxlan backend: a VTEP per node, then the routes, neighbours and FDB entries flanneld writes for its peers. */
async function flannelBetweenNodes(lab: NetnsLab, topology: TopologySpec): Promise<void> {
  const nodes: FlannelNode[] = topology.nodes.map((n, i) => ({ name: n.name, podCIDR: n.podCIDR, nodeIP: lab.address(`node/${n.name}`), vtepMac: vtepMac(i + 1) }));
  await Promise.all(nodes.map((n) => ipBatch(lab.names.node(n.name), flannelDevice(n))));
  await Promise.all(
    nodes.map(async (n) => {
      const entries = flannelPeerEntries(n, nodes);
      if (entries.ip.length > 0) await ipBatch(lab.names.node(n.name), entries.ip);
      if (entries.bridge.length > 0) await runCommand(['bridge', '-n', lab.names.node(n.name), '-batch', '-'], { input: entries.bridge.join('\n') + '\n' });
    }),
  );
}

/** Helper programs commands may name as `{bin/NAME}`; a missing compiler only matters to scenarios that use them. */
async function buildHelpers(lab: NetnsLab): Promise<void> {
  for (const name of HELPERS) {
    try {
      lab.bins.set(name, { path: await helperBinary(name) });
    } catch (e) {
      lab.bins.set(name, { error: (e as Error).message.split('\n')[0] });
    }
  }
}

export function podPlacements(lab: NetnsLab, topology: TopologySpec): Map<string, PodPlacement> {
  return new Map(topology.pods.map((p) => [p.name, { ip: lab.address(`pod/${p.name}`), node: p.node }]));
}

/** What the node's components read at start: pod placements, be_liberal (kube-proxy >= 1.29 reads it then), no nfacct counters (no nfacct tool here). */
async function nodeFacts(lab: NetnsLab, nodeName: string): Promise<NodeFacts> {
  const liberal = await lab.node(nodeName).exec(['sysctl', '-n', 'net.netfilter.nf_conntrack_tcp_be_liberal']);
  return { placements: podPlacements(lab, lab.topology), beLiberal: liberal.stdout.trim() === '1', nfacctCounters: false };
}

async function performAction(lab: NetnsLab, action: LabAction): Promise<void> {
  if (action.kind === 'endpoint' || action.kind === 'service') return changeServices(lab, action, podPlacements(lab, lab.topology));
  const node = lab.node(action.node);
  switch (action.kind) {
    case 'start':
      if (action.component !== 'kube-proxy' && action.component !== lab.topology.cni) {
        throw new HarnessError('UNSUPPORTED', `${action.component} runs only in the ${action.component} CNI shape`);
      }
      if (action.component === 'kube-proxy') lab.kubeProxyVersions.set(action.node, action.version ?? lab.topology.kubeProxy);
      return applyOps(node, componentStart(lab.topology, action.node, action.component, await nodeFacts(lab, action.node), action.version));
    case 'reboot': {
      const order = action.order ?? lab.topology.startOrder;
      // rules and conntrack go with the reboot; be_liberal is a sysctl the node keeps (set at boot from its config)
      await node.exec(['conntrack', '-F'], { reject: false });
      lab.kubeProxyVersions.delete(action.node);
      return applyOps(node, bootOps(lab.topology, action.node, await nodeFacts(lab, action.node), order));
    }
    case 'sock-lb-stale-program': {
      // the stale program was there before the current agent attached its own: it runs first (FIFO)
      const vip = lab.address(action.service);
      const [ip = '', port = '0'] = action.backend.split(':');
      const protocol = action.hook === 'sendmsg4' ? 'UDP' : 'TCP';
      await loadSocketLb(lab, action.node, 'sock-stale', [{ vip, port: action.port, protocol, backends: [{ ip, port: Number(port) }] }], []);
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

async function startPrograms(lab: NetnsLab, topology: TopologySpec, run: RunContext): Promise<void> {
  const records = topology.services.map((s) => `--record=${s.name}.${s.namespace}.svc.cluster.local=${s.clusterIP}`);
  const machines = [
    ...topology.pods.map((p) => ({ name: p.name, serve: p.serve, target: () => lab.pod(p.name) })),
    ...topology.hosts.map((h) => ({ name: h.name, serve: h.serve, target: () => lab.host(h.name) })),
  ];
  const starts = machines.flatMap((m) =>
    (m.serve ?? []).map(async (program) => {
      const argv = program.http
        ? [...lab.agentCommand, 'http', `--port=${program.http}`, `--name=${m.name}`]
        : [...lab.agentCommand, 'dns', `--port=${program.dns}`, `--name=${m.name}`, ...records];
      const process = m.target().spawn(argv, { signal: run.signal });
      lab.processes.push(process);
      await process.waitFor(/^ready /, READY_TIMEOUT_MS);
    }),
  );
  await Promise.all(starts);
}
