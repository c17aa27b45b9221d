// The `cilium` CNI shape, modelled on Cilium's legacy host routing: pods on routed `lxc*` veths
// (/32 routes, the pod's gateway answered by the node through a permanent neighbour entry),
// cilium_host/cilium_net, BPF masquerade on the node device (the reply bypasses netfilter), and
// optionally socket LB (cgroup connect4/sendmsg4/recvmsg4/getpeername4 programs rewriting
// ClusterIP <-> backend). Between nodes: native routing (routes to the other nodes' pod CIDRs over
// the fabric, set up with the other shapes' routes), never masqueraded.
import { mkdir } from 'node:fs/promises';
import { HarnessError } from '../../model/errors.ts';
import type { TopologySpec } from '../../model/scenario-schema.ts';
import { bpfObject } from './bpf-build.ts';
import { batchLines, masqueradeConfig, masqueradeEndpoint, socketLbEntries, type LbService } from './bpf-maps.ts';
import { invokeCni } from './cni-plugin.ts';
import { ipBatch } from '../namespaces/namespace-batch.ts';
import type { CiliumEndpoint, LabInventory } from './lab-inventory.ts';
import type { NetnsLab } from './netns-lab.ts';
import { CGROUP_ROOT } from './run-cgroups.ts';
import { awaitedLater } from '../../contract/awaited-later.ts';
import { publishedReady, targetPortOf } from '../../contract/kube-objects.ts';

/** Where pins live inside the node's private bpffs (mounted only in its holder's mount namespace). */
export const PIN_DIR = '/sys/fs/bpf/netrepro';

/**
 * bpffs is not mounted on every host (not on this one), and mounting it in the root mount namespace
 * would outlive the run. Each node gets a holder process in its netns with a private mount namespace
 * and its own bpffs; killing the holder (teardown, clean) drops every pin.
 */
async function startBpffsHolder(lab: NetnsLab, inventory: LabInventory, node: string): Promise<void> {
  const holder = lab
    .node(node)
    .spawn([
      'unshare',
      '--mount',
      '--propagation',
      'slave',
      'sh',
      '-c',
      `mount -t bpf bpffs-netrepro /sys/fs/bpf && mkdir -p ${PIN_DIR} && echo ready && exec sleep infinity`,
    ]);
  lab.track(holder);
  await holder.waitFor(/^ready$/, 5000);
  inventory.recordBpffsHolder(node, `/proc/${holder.pid}/ns/mnt`);
}

/** The node's address in its pod CIDR (network + 1), on cilium_host. */
const routerIp = (podCidr: string) => {
  const octets = (podCidr.split('/')[0] ?? '').split('.').map(Number);
  octets[3] = (octets[3] ?? 0) + 1;
  return octets.join('.');
};

/** A pod's endpoint with the namespace it is made in. */
interface Endpoint extends CiliumEndpoint {
  ns: string;
}

/** A stable locally administered MAC from an IPv4 address (as the bridge CNI plugin derives its 0a:58:... ones). */
const macFor = (first: number, ip: string) =>
  [first, 0x58, ...ip.split('.').map(Number)].map((b) => b.toString(16).padStart(2, '0')).join(':');

/** The cgroup the node's pods run in (socket LB hooks it); made before the pods' programs start. */
export async function createSocketLbCgroup(lab: NetnsLab, inventory: LabInventory, nodeName: string): Promise<void> {
  if (!lab.topology.cilium.socketLB) return;
  const cgroup = `${CGROUP_ROOT}/${lab.names.runId}/${nodeName}`;
  await mkdir(cgroup, { recursive: true });
  inventory.recordSocketLbCgroup(nodeName, cgroup);
}

/** The node's bpffs holder, cilium_host/cilium_net, and each pod on its routed lxc veth. */
export async function createCiliumEndpoints(lab: NetnsLab, inventory: LabInventory, nodeName: string): Promise<void> {
  const topology = lab.topology;
  const node = topology.nodes.find((n) => n.name === nodeName)!;
  const nodeNs = lab.names.node(nodeName);
  const router = routerIp(node.podCIDR);
  const holder = awaitedLater(startBpffsHolder(lab, inventory, nodeName));
  const nodeLines = [
    'link add cilium_host type veth peer name cilium_net',
    'link set cilium_host up',
    'link set cilium_net up',
    `addr add ${router}/32 dev cilium_host`,
    `route add ${node.podCIDR} dev cilium_host src ${router}`,
  ];
  const endpoints: Endpoint[] = [];
  // addresses from the real host-local IPAM plugin, as Cilium's own IPAM would hand them out (in pod order)
  for (const pod of topology.pods.filter((p) => p.node === nodeName)) {
    const ns = lab.names.pod(pod.name);
    const ipam = await invokeCni({
      command: 'ADD',
      nodeNetnsPath: lab.names.netnsPath(nodeNs),
      podNetnsPath: lab.names.netnsPath(ns),
      containerId: ns,
      commands: lab.commands,
      ifName: 'eth0',
      config: {
        cniVersion: '1.0.0',
        name: 'netrepro',
        type: 'host-local',
        ipam: {
          type: 'host-local',
          ranges: [[{ subnet: node.podCIDR }]],
          dataDir: `${lab.names.stateDir}/ipam/${nodeName}`,
        },
      },
    });
    const ip = ipam.ips?.[0]?.address.split('/')[0];
    if (!ip) throw new HarnessError('LAB_FAILED', `host-local returned no address for pod ${pod.name}`);
    const lxc = `lxc${ip
      .split('.')
      .map((o) => Number(o).toString(16).padStart(2, '0'))
      .join('')}`;
    // MACs chosen here, so neither side has to be looked up before the pod's neighbour entry is written
    const endpoint = { ns, ip, lxc, lxcMac: macFor(0x0e, ip), podMac: macFor(0x0a, ip) };
    endpoints.push(endpoint);
    inventory.recordCiliumEndpoint(pod.name, endpoint);
    nodeLines.push(
      `link add ${lxc} address ${endpoint.lxcMac} type veth peer name eth0 address ${endpoint.podMac} netns ${ns}`,
      `link set ${lxc} up`,
      `route add ${ip}/32 dev ${lxc}`,
    );
  }
  await ipBatch(nodeNs, nodeLines, lab.commands);
  await Promise.all(
    endpoints.map((e) =>
      ipBatch(
        e.ns,
        [
          'link set lo up',
          `addr add ${e.ip}/32 dev eth0`,
          'link set eth0 up',
          `route add ${router} dev eth0 scope link`,
          `route add default via ${router} dev eth0`,
          `neigh add ${router} lladdr ${e.lxcMac} dev eth0 nud permanent`,
        ],
        lab.commands,
      ),
    ),
  );
  await holder;
}

/** BPF masquerade on the node's eth0 (it must exist) and the socket-LB program, as the topology asks. */
export async function loadCiliumDatapath(lab: NetnsLab, topology: TopologySpec, nodeName: string): Promise<void> {
  const node = topology.nodes.find((n) => n.name === nodeName)!;
  const nodeNs = lab.names.node(nodeName);
  const endpoints = topology.pods.filter((p) => p.node === nodeName).map((p) => lab.inventory.ciliumEndpoint(p.name)!);
  const target = lab.node(nodeName);
  if (topology.cilium.bpfMasquerade) {
    const links = JSON.parse((await target.exec(['ip', '-j', 'link', 'show'])).stdout) as {
      ifname: string;
      ifindex: number;
    }[];
    const ifindex = (name: string) => {
      const l = links.find((x) => x.ifname === name);
      if (!l) throw new HarnessError('LAB_FAILED', `no link ${name} in ${nodeNs}`);
      return l.ifindex;
    };
    const object = await bpfObject('masquerade');
    const nativeRouting = topology.cilium.nativeRoutingCIDR ?? topology.clusterCIDR;
    const updates = [
      masqueradeConfig(lab.address(`node/${nodeName}`), node.podCIDR, nativeRouting),
      ...endpoints.map((e) => masqueradeEndpoint(e.ip, ifindex(e.lxc), e.podMac, e.lxcMac)),
    ];
    // (not `prog loadall` inside the batch: bpftool then fails the batch on the errno its pinning leaves behind)
    await target.exec([
      'bpftool',
      '--nomount',
      'prog',
      'loadall',
      object,
      `${PIN_DIR}/masq`,
      'pinmaps',
      `${PIN_DIR}/masq-maps`,
    ]);
    await target.exec(['bpftool', '--nomount', 'batch', 'file', '-'], {
      input: batchLines(`${PIN_DIR}/masq-maps`, updates),
    });
    await target.exec(['tc', '-batch', '-'], {
      input: `${['qdisc add dev eth0 clsact', ...['egress', 'ingress'].map((dir) => `filter add dev eth0 ${dir} bpf da pinned ${PIN_DIR}/masq/nr_masq_${dir}`)].join('\n')}\n`,
    });
  }
  if (topology.cilium.socketLB) await loadSocketLb(lab, nodeName, 'sock-current', lbServices(lab, topology));
}

function lbServices(lab: NetnsLab, topology: TopologySpec): LbService[] {
  // a headless Service has no address for the socket LB to rewrite
  return topology.services
    .filter((s) => s.clusterIP !== 'None')
    .flatMap((s) =>
      s.ports.map((p) => ({
        vip: s.clusterIP,
        port: p.port,
        protocol: p.protocol,
        backends: s.endpoints
          .filter((e) => publishedReady(s, e))
          .flatMap((e) => {
            const port = targetPortOf(
              p,
              topology.pods.find((x) => x.name === e.pod),
            );
            return port === undefined ? [] : [{ ip: lab.address(`pod/${e.pod}`), port }];
          }),
      })),
    );
}

/** The cgroup hooks of one socket-LB load and the program pinned for each (bpftool loadall pins by function name). */
export const SOCK_LB_PROGRAMS = {
  connect4: 'cil_sock4_connect',
  sendmsg4: 'cil_sock4_sendmsg',
  recvmsg4: 'cil_sock4_recvmsg',
  getpeername4: 'cil_sock4_getpeername',
} as const;
export type SockLbHook = keyof typeof SOCK_LB_PROGRAMS;
const ALL_HOOKS = Object.keys(SOCK_LB_PROGRAMS) as SockLbHook[];

/** Loads one instance of the socket-LB object with its own maps (same names each time) and attaches `hooks`. */
export async function loadSocketLb(
  lab: NetnsLab,
  nodeName: string,
  instance: string,
  services: LbService[],
  hooks: readonly SockLbHook[] = ALL_HOOKS,
): Promise<void> {
  const target = lab.node(nodeName);
  const object = await bpfObject('sock-lb');
  await target.exec([
    'bpftool',
    '--nomount',
    'prog',
    'loadall',
    object,
    `${PIN_DIR}/${instance}`,
    'pinmaps',
    `${PIN_DIR}/${instance}-maps`,
  ]);
  await target.exec(['bpftool', '--nomount', 'batch', 'file', '-'], {
    input: batchLines(`${PIN_DIR}/${instance}-maps`, socketLbEntries(services)),
  });
  await attachSocketLb(lab, nodeName, instance, hooks);
}

export async function attachSocketLb(
  lab: NetnsLab,
  nodeName: string,
  instance: string,
  hooks: readonly SockLbHook[] = ALL_HOOKS,
): Promise<void> {
  await cgroupBatch(
    lab,
    nodeName,
    hooks.map(
      (hook) =>
        `cgroup attach ${socketLbCgroup(lab, nodeName)} ${hook} pinned ${PIN_DIR}/${instance}/${SOCK_LB_PROGRAMS[hook]} multi`,
    ),
  );
}

export async function detachSocketLb(
  lab: NetnsLab,
  nodeName: string,
  instance: string,
  hooks: readonly SockLbHook[] = ALL_HOOKS,
): Promise<void> {
  await cgroupBatch(
    lab,
    nodeName,
    hooks.map(
      (hook) =>
        `cgroup detach ${socketLbCgroup(lab, nodeName)} ${hook} pinned ${PIN_DIR}/${instance}/${SOCK_LB_PROGRAMS[hook]}`,
    ),
  );
}

/** Attaches or detaches in one bpftool, in order (the order programs are attached in is the order they run in). */
async function cgroupBatch(lab: NetnsLab, nodeName: string, lines: string[]): Promise<void> {
  if (lines.length > 0)
    await lab.node(nodeName).exec(['bpftool', '--nomount', 'batch', 'file', '-'], { input: `${lines.join('\n')}\n` });
}

/** The hooks a stale instance is attached to, read back from the kernel (the fix detaches exactly those). */
export async function attachedHooks(lab: NetnsLab, nodeName: string, instance: string): Promise<SockLbHook[]> {
  const hooks: SockLbHook[] = [];
  const cgroup = socketLbCgroup(lab, nodeName);
  const shown = await lab.node(nodeName).exec(['bpftool', '--nomount', '-j', 'cgroup', 'show', cgroup]);
  const attached = new Set((JSON.parse(shown.stdout || '[]') as { id: number }[]).map((p) => p.id));
  for (const hook of ALL_HOOKS) {
    const r = await lab
      .node(nodeName)
      .exec(
        ['bpftool', '--nomount', '-j', 'prog', 'show', 'pinned', `${PIN_DIR}/${instance}/${SOCK_LB_PROGRAMS[hook]}`],
        { reject: false },
      );
    if (r.exitCode === 0 && attached.has((JSON.parse(r.stdout) as { id: number }).id)) hooks.push(hook);
  }
  return hooks;
}

function socketLbCgroup(lab: NetnsLab, nodeName: string): string {
  const cgroup = lab.inventory.socketLbCgroup(nodeName);
  if (!cgroup)
    throw new HarnessError('UNSUPPORTED', `node ${nodeName} has no socket LB (topology.cilium.socketLB: true)`);
  return cgroup;
}
