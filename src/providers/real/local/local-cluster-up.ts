// Brings up a real Kubernetes cluster on this host, every piece inside the run's own namespaces:
//   fabric namespace (nr-<run>-fabric): the bridge joining the nodes (br0, 172.18.0.1/24, as in the netns
//     lab), etcd on its loopback, kube-apiserver on 172.18.0.1:6443, controller-manager, scheduler, and a
//     forwarder from a socket file of the run to the API server (the harness's only way in: nothing listens
//     in the root namespace);
//   per node (nr-<run>-n-<node>): eth0 on the fabric (172.18.0.<i+2>), a private mount namespace (its /run,
//     /var/lib and /var/log are the node's own directories: containerd's shim sockets, CNI state and pod logs
//     never touch the host's), containerd with its own root, state and socket, kubelet (cgroup root
//     /nr-<run>-<node>), kube-proxy, and the bridge CNI (cni0, host-local on the scenario's podCIDR, routes
//     to the other nodes' podCIDRs).
// Every process is registered for teardown as it starts; readiness is a printed line or the API's answer.
import { mkdir, readdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HarnessError } from '../../../model/errors.ts';
import type { TopologySpec } from '../../../model/scenario-schema.ts';
import { runCommand } from '../../../contract/command.ts';
import { settleAll } from '../../../contract/settle-all.ts';
import { rmdirWhenEmpty } from '../../namespaces/rmdir-when-empty.ts';
import { killAll } from '../../namespaces/namespace-pids.ts';
import { ipBatch, removeNamespaces } from '../../namespaces/namespace-batch.ts';
import type { RunContext } from '../../../contract/provider.ts';
import { bridgeConflistText } from '../../../dataplane/bridge-conflist.ts';
import { Daemon } from '../common/daemon.ts';
import type { LocalBuild } from './local-build.ts';
import { LOCAL_STATE_ROOT, type LocalNames } from './local-names.ts';
import { kubeconfigYaml, makePki, type LocalPki } from './local-pki.ts';
import {
  apiserverArgv,
  controllerManagerArgv,
  etcdArgv,
  schedulerArgv,
  type ControlPlaneInput,
} from './local-control-plane.ts';
import { writeKubeProxyConfig, writeNodeConfigs } from './local-node-configs.ts';
import { bootKubeProxy } from '../../../dataplane/node-iptables.ts';
import type { KubeProxyConfig } from '../../../model/lab-action.ts';
import { waitKubeProxySettled } from '../common/kube-proxy-syncs.ts';
import { namespaceTarget } from './local-cluster.ts';
import { packagePath } from '../../../model/package-root.ts';
import {
  flannelDevice,
  flannelPeerEntries,
  FLANNEL_MTU,
  vtepMac,
  type FlannelNode,
} from '../../../dataplane/flannel-entries.ts';
import { helperBinary } from '../../namespaces/helper-build.ts';
import { agentProgramArgv } from '../../../contract/agent-program.ts';
import { defaultGateway, FABRIC_GATEWAY, FABRIC_NET } from '../../../dataplane/node-network.ts';

/** The control plane lives in the fabric namespace, at the nodes' gateway address (as in the netns lab, that gateway forwards nothing). */
export const APISERVER_IP = FABRIC_GATEWAY;
export const SERVICE_CIDR = '10.96.0.0/12';
const KUBERNETES_SERVICE_IP = '10.96.0.1';
/** What kubelet would write to the host's kernel at start (setupKernelTunables): read from files in the node's own mount namespace instead. */
const KUBELET_KERNEL_TUNABLES = [
  'vm/overcommit_memory',
  'vm/panic_on_oom',
  'kernel/panic',
  'kernel/panic_on_oops',
  'kernel/keys/root_maxkeys',
  'kernel/keys/root_maxbytes',
];

export interface LocalNode {
  /** The scenario's node name. */
  scenarioName: string;
  /** The Kubernetes node name. */
  kubeName: string;
  netns: string;
  ip: string;
  podCIDR: string;
  dir: string;
  /** The private mount namespace of the node (its holder process). */
  mountNs: () => string;
  daemons: Map<'containerd' | 'kubelet' | 'kube-proxy', Daemon>;
}

export interface LocalHost {
  name: string;
  netns: string;
  ip: string;
}

export interface LocalClusterHandle {
  kubeconfig: string;
  context: string;
  socket: string;
  pki: LocalPki;
  nodes: LocalNode[];
  hosts: LocalHost[];
  /** Milliseconds from the start of the bring-up to each milestone. */
  timings: Record<string, number>;
  startKubelet(node: LocalNode): Promise<Daemon>;
  startKubeProxy(node: LocalNode): Promise<Daemon>;
  waitKubeProxySynced(node: LocalNode): Promise<void>;
  /** kube-proxy stopped, its configuration file written anew, started, and waited for until its first sync is done. */
  restartKubeProxy(node: LocalNode, config: KubeProxyConfig): Promise<void>;
}

export interface BringUpInput {
  build: LocalBuild;
  names: LocalNames;
  topology: TopologySpec;
  run: RunContext;
  /** Registers an undo on the cluster's TeardownStack. */
  onDestroy(what: string, action: () => Promise<unknown>): void;
  /** Waits for the API server's /readyz, then for a node to be Ready (through the socket). */
  api: {
    ready(kubeconfig: string, socket: string, timeoutMs: number): Promise<void>;
    nodeReady(name: string, timeoutMs: number): Promise<void>;
    setPodCIDR(name: string, cidr: string): Promise<void>;
    waitNodeRegistered(name: string, timeoutMs: number): Promise<void>;
  };
}

const CGROUP_HIERARCHIES_ROOT = '/sys/fs/cgroup';

/** The cgroup v1 hierarchies (and the v2 one) mounted here: kubelet's --cgroup-root must exist in each. */
export async function cgroupHierarchies(): Promise<string[]> {
  const mounts = await readFile('/proc/self/mounts', 'utf8');
  return mounts
    .split('\n')
    .map((l) => l.split(' '))
    .filter(
      ([, target, type]) =>
        (type === 'cgroup' || type === 'cgroup2') && target?.startsWith(`${CGROUP_HIERARCHIES_ROOT}/`),
    )
    .map(([, target]) => target!);
}

/** Kills every process in the cgroup directories named `root` (a kubelet's --cgroup-root, all of its pods) and removes them, deepest first. */
export async function removeCgroupRoot(root: string): Promise<void> {
  for (const hierarchy of await cgroupHierarchies()) {
    const top = join(hierarchy, root);
    const dirs = await walk(top);
    for (const d of dirs) {
      const procs = await readFile(join(d, 'cgroup.procs'), 'utf8').catch(() => '');
      killAll(procs.split('\n').filter(Boolean).map(Number));
    }
    for (const d of dirs.reverse()) await rmdirWhenEmpty(d, 5000);
  }
}

async function walk(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => undefined);
  if (!entries) return [];
  const out = [dir];
  for (const e of entries) if (e.isDirectory()) out.push(...(await walk(join(dir, e.name))));
  return out;
}

async function makeCgroupRoot(root: string): Promise<void> {
  for (const hierarchy of await cgroupHierarchies()) {
    const dir = join(hierarchy, root);
    await mkdir(dir, { recursive: true });
    if (hierarchy.endsWith('/cpuset')) {
      // a v1 cpuset cgroup has no CPUs or memory nodes until given its parent's
      for (const f of ['cpuset.cpus', 'cpuset.mems'])
        await writeFile(join(dir, f), await readFile(join(hierarchy, f), 'utf8'));
    }
  }
}

/** Brings the cluster up in this order; each step registers the undo of what it makes as it makes it. */
export async function bringUpLocalCluster(input: BringUpInput): Promise<LocalClusterHandle> {
  const up = new LocalBringUp(input);
  await writeOwnerFiles(up);
  await wireNamespaces(up);
  up.mark('namespaces wired');
  // a node's runtime needs no API server: containerd starts and imports its images while the control plane comes up
  const controlPlane = startControlPlane(up);
  await settleAll([controlPlane, writeFile(up.resolvConf, ''), ...up.nodes.map((n) => startNodeRuntime(up, n))]);
  const pki = await controlPlane;
  await settleAll(up.nodes.map((n) => joinNode(up, n)));
  await startHostPrograms(up);
  up.mark('cluster up');
  const { kubeconfig, context, socket, nodes, hosts, timings } = up;
  return {
    kubeconfig,
    context,
    socket,
    pki,
    nodes,
    hosts,
    timings,
    startKubelet: up.startKubelet,
    startKubeProxy: up.startKubeProxy,
    waitKubeProxySynced: up.waitKubeProxySynced,
    restartKubeProxy: up.restartKubeProxy,
  };
}

/** A daemon of the bring-up: its name (and log file), argv, the namespaces it enters, and its undo's name. */
interface DaemonSpec {
  name: string;
  argv: string[];
  enter: { net: string; mount?: string };
  /** How its teardown is named; the daemon's name if not given. */
  what?: string;
  /** Variables added to this process's environment. */
  env?: Record<string, string>;
}

/**
 * The state one bring-up owns: its input, the machines it makes, the paths of the files it writes, and
 * when each milestone was reached. The nodes' and hosts' addresses follow their order in the topology.
 */
class LocalBringUp {
  /** Milliseconds from the start of the bring-up to each milestone. */
  readonly timings: Record<string, number> = {};
  private readonly t0 = performance.now();
  readonly nodes: LocalNode[];
  /** Outside the cluster, on the nodes' network, with no route back to the pod network (as in the netns lab). */
  readonly hosts: LocalHost[];
  readonly kubeconfig: string;
  readonly context: string;
  /** The socket file the API server is reached through. */
  readonly socket: string;
  readonly resolvConf: string;

  constructor(readonly input: BringUpInput) {
    const { names, topology } = input;
    this.nodes = topology.nodes.map((n, i) => ({
      scenarioName: n.name,
      kubeName: names.kubeNode(n.name),
      netns: names.node(n.name),
      ip: `${FABRIC_NET}.${i + 2}`,
      podCIDR: n.podCIDR,
      dir: names.nodeDir(n.name),
      mountNs: () => {
        throw new HarnessError('LAB_FAILED', `node ${n.name} has no mount namespace yet`);
      },
      daemons: new Map(),
    }));
    this.hosts = topology.hosts.map((h, i) => ({
      name: h.name,
      netns: names.host(h.name),
      ip: `${FABRIC_NET}.${100 + i}`,
    }));
    this.context = `${names.prefix}cluster`;
    this.kubeconfig = join(names.state, 'kubeconfig');
    this.socket = join(names.state, 'apiserver.sock');
    this.resolvConf = join(names.state, 'resolv.conf');
  }

  /** The run's state directory. */
  get state(): string {
    return this.input.names.state;
  }

  mark(what: string): void {
    this.timings[what] = Math.round(performance.now() - this.t0);
    this.input.run.log(`local: ${what} (${(this.timings[what] / 1000).toFixed(1)} s)`);
  }

  hostIP(ref: string): string | undefined {
    return this.hosts.find((h) => `host/${h.name}` === ref)?.ip;
  }

  /** Starts a daemon, its output in the run's logs, and registers its stop. */
  daemon({ name, argv, enter, what = name, env }: DaemonSpec): Daemon {
    const d = new Daemon(name, argv, join(this.state, 'logs', `${name}.log`), enter, env);
    this.input.onDestroy(what, () => d.stop());
    return d;
  }

  readonly startKubelet = async (n: LocalNode): Promise<Daemon> => {
    const { build } = this.input;
    const d = this.daemon({
      name: `kubelet-${n.scenarioName}`,
      argv: [
        build.bin('kubelet'),
        `--config=${join(n.dir, 'kubelet.yaml')}`,
        `--kubeconfig=${this.kubeconfig}`,
        '--container-runtime=remote',
        `--container-runtime-endpoint=unix://${join(n.dir, 'containerd.sock')}`,
        `--hostname-override=${n.kubeName}`,
        `--node-ip=${n.ip}`,
        `--root-dir=${join(n.dir, 'kubelet')}`,
        `--volume-plugin-dir=${join(n.dir, 'kubelet', 'volume-plugins')}`,
        `--cert-dir=${join(n.dir, 'kubelet', 'pki')}`,
        `--pod-infra-container-image=${build.images.pauseRef}`,
        '--logtostderr=true',
        '--v=0',
      ],
      enter: { net: `/run/netns/${n.netns}`, mount: n.mountNs() },
      // its in-tree ECR credential provider otherwise asks the EC2 metadata address (169.254.169.254) for
      // credentials at start-up: SYNs nothing answers in the lab, ~6 s before the node registers
      env: { AWS_EC2_METADATA_DISABLED: 'true' },
      what: `kubelet on ${n.kubeName}`,
    });
    n.daemons.set('kubelet', d);
    return d;
  };

  readonly startKubeProxy = async (n: LocalNode): Promise<Daemon> => {
    const d = this.daemon({
      name: `kube-proxy-${n.scenarioName}`,
      argv: [
        this.input.build.bin('kube-proxy'),
        `--config=${join(n.dir, 'kube-proxy.yaml')}`,
        '--logtostderr=true',
        '--v=0',
      ],
      enter: { net: `/run/netns/${n.netns}`, mount: n.mountNs() },
      what: `kube-proxy on ${n.kubeName}`,
    });
    n.daemons.set('kube-proxy', d);
    return d;
  };

  readonly restartKubeProxy = async (n: LocalNode, config: KubeProxyConfig): Promise<void> => {
    await n.daemons.get('kube-proxy')?.stop();
    await writeKubeProxyConfig(n, this.kubeconfig, config);
    const since = Date.now();
    const proxy = await this.startKubeProxy(n);
    // its rules stay in place across the restart: the new process's own syncs say when it wrote them
    await waitKubeProxySettled(
      namespaceTarget(`node/${n.scenarioName}`, n.netns),
      since,
      this.input.run.signal,
      async () => {
        if (!proxy.running)
          throw new HarnessError('LAB_FAILED', `kube-proxy on ${n.kubeName} exited; its log:\n${await proxy.tail()}`);
      },
    );
  };

  /** Synced once its rules hold the `kubernetes` Service, which exists from the API server's start. */
  readonly waitKubeProxySynced = async (n: LocalNode): Promise<void> => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const r = await runCommand(['iptables-save', '-t', 'nat'], {
        enter: { net: `/run/netns/${n.netns}` },
        reject: false,
      });
      if (/-A KUBE-SERVICES .*default\/kubernetes:https/.test(r.stdout)) return;
      const proxy = n.daemons.get('kube-proxy');
      if (proxy && !proxy.running)
        throw new HarnessError('LAB_FAILED', `kube-proxy on ${n.kubeName} exited; its log:\n${await proxy.tail()}`);
      if (Date.now() > deadline)
        throw new HarnessError(
          'LAB_FAILED',
          `kube-proxy on ${n.kubeName} wrote no rules within 60 s; its log:\n${await proxy?.tail()}`,
        );
      if (this.input.run.signal.aborted) throw new HarnessError('ABORTED', 'aborted while waiting for kube-proxy');
      await new Promise((r) => setTimeout(r, 200));
    }
  };
}

/** The run's state directory with its owner, and the netns lab's owner file too: its `clean` then leaves this live run's namespaces alone. */
async function writeOwnerFiles(up: LocalBringUp): Promise<void> {
  const { names, run, onDestroy } = up.input;
  const state = names.state;
  onDestroy(`state directory ${state}`, async () => {
    await rm(state, { recursive: true, force: true });
    await rmdir(LOCAL_STATE_ROOT).catch(() => {}); // the last run's leaves nothing
  });
  await mkdir(join(state, 'logs'), { recursive: true });
  const owner = `${JSON.stringify({ pid: process.pid, runId: run.runId })}\n`;
  await writeFile(join(state, 'owner.json'), owner);
  onDestroy(`owner file ${names.stateDir}`, () => rm(names.stateDir, { recursive: true, force: true }));
  await mkdir(names.stateDir, { recursive: true });
  await writeFile(join(names.stateDir, 'owner.json'), owner);
}

/** The fabric, nodes' and hosts' namespaces, joined by the fabric's bridge, each node with its routes and sysctls. */
async function wireNamespaces(up: LocalBringUp): Promise<void> {
  const { names, onDestroy } = up.input;
  const { nodes, hosts } = up;
  const namespaces = [names.fabric, ...nodes.map((n) => n.netns), ...hosts.map((h) => h.netns)];
  onDestroy(`namespaces ${namespaces.join(' ')}`, () => removeNamespaces([...namespaces].reverse()));
  await runCommand(['ip', '-batch', '-'], { input: namespaces.map((ns) => `netns add ${ns}\n`).join('') });
  await ipBatch(names.fabric, fabricLinks(nodes, hosts));
  // the nodes' gateway forwards nothing, whatever the host's own ip_forward (which a new namespace inherits) says
  await runCommand(['sysctl', '-q', '-w', 'net.ipv4.ip_forward=0'], { enter: { net: `/run/netns/${names.fabric}` } });
  const flannel: FlannelNode[] = nodes.map((n, i) => ({
    name: n.scenarioName,
    podCIDR: n.podCIDR,
    nodeIP: n.ip,
    vtepMac: vtepMac(i + 1),
  }));
  await settleAll([
    ...nodes.map((_, i) => wireNode(up, i, flannel)),
    ...hosts.map((h) => ipBatch(h.netns, ['link set lo up', `addr add ${h.ip}/24 dev eth0`, 'link set eth0 up'])),
  ]);
}

/** The fabric's bridge with the control plane's address, and a veth to it from every node and host. */
function fabricLinks(nodes: LocalNode[], hosts: LocalHost[]): string[] {
  const fabric = [
    'link set lo up',
    'link add br0 type bridge',
    'link set br0 up',
    `addr add ${APISERVER_IP}/24 dev br0`,
  ];
  for (const [i, n] of nodes.entries())
    fabric.push(
      `link add n${i} type veth peer name eth0 netns ${n.netns}`,
      `link set n${i} master br0`,
      `link set n${i} up`,
    );
  for (const [i, h] of hosts.entries())
    fabric.push(
      `link add h${i} type veth peer name eth0 netns ${h.netns}`,
      `link set h${i} master br0`,
      `link set h${i} up`,
    );
  return fabric;
}

/** Node `i`'s address, default route, routes (or flannel's entries) to the other nodes' pods, and sysctls. */
async function wireNode(up: LocalBringUp, i: number, flannel: FlannelNode[]): Promise<void> {
  const { topology } = up.input;
  const n = up.nodes[i]!;
  const node = topology.nodes[i]!;
  const lines = ['link set lo up', `addr add ${n.ip}/24 dev eth0`, 'link set eth0 up'];
  const gateway = defaultGateway(node.defaultRoute, (ref) => up.hostIP(ref)!);
  if (gateway) lines.push(`route add default via ${gateway} dev eth0`);
  if (topology.cni === 'flannel') {
    // flanneld is not packaged in Debian: its vxlan backend's device and per-peer entries, as flanneld writes them
    const entries = flannelPeerEntries(flannel[i]!, flannel);
    await ipBatch(n.netns, [...lines, ...flannelDevice(flannel[i]!), ...entries.ip]);
    if (entries.bridge.length > 0)
      await runCommand(['bridge', '-n', n.netns, '-batch', '-'], { input: `${entries.bridge.join('\n')}\n` });
  } else {
    const others = topology.nodes.filter((o) => o.name !== node.name);
    await ipBatch(n.netns, [
      ...lines,
      ...others.map((o) => `route add ${o.podCIDR} via ${FABRIC_NET}.${topology.nodes.indexOf(o) + 2} dev eth0`),
    ]);
  }
  // the node's sysctls before its components start (kube-proxy reads some at its start, as in the lab)
  const sysctls = Object.entries({
    'net.ipv4.ip_forward': 1,
    'net.bridge.bridge-nf-call-iptables': 1,
    ...node.sysctls,
  }).map(([k, v]) => `${k}=${v}`);
  await runCommand(['sysctl', '-q', '-w', ...sysctls], { enter: { net: `/run/netns/${n.netns}` } });
  // the FORWARD policy it boots with (DROP as Docker sets it), before kube-proxy writes its rules
  if (node.forwardPolicy === 'DROP')
    await runCommand(['iptables', '-w', '-P', 'FORWARD', 'DROP'], { enter: { net: `/run/netns/${n.netns}` } });
}

/** Certificates and the kubeconfig, then etcd, the API server behind the run's socket, the controller manager and the scheduler. */
async function startControlPlane(up: LocalBringUp): Promise<LocalPki> {
  const { build, names, topology, run } = up.input;
  const pki = await makePki(join(up.state, 'pki'), [APISERVER_IP, KUBERNETES_SERVICE_IP, '127.0.0.1']);
  await writeFile(up.kubeconfig, kubeconfigYaml(`https://${APISERVER_IP}:6443`, pki.ca, pki.token, up.context), {
    mode: 0o600,
  });
  const inFabric = { net: `/run/netns/${names.fabric}` };
  const argvInput: ControlPlaneInput = {
    build,
    pki,
    state: up.state,
    kubeconfig: up.kubeconfig,
    apiserverIP: APISERVER_IP,
    serviceCIDR: SERVICE_CIDR,
    clusterCIDR: topology.clusterCIDR,
  };
  const etcd = up.daemon({ name: 'etcd', argv: etcdArgv(up.state), enter: inFabric });
  await etcd.waitForLine(/ready to serve client requests/, 30_000, run.signal);
  up.mark('etcd ready');
  const apiserver = up.daemon({ name: 'kube-apiserver', argv: apiserverArgv(argvInput), enter: inFabric });
  const forwarder = up.daemon({
    name: 'api-forwarder',
    argv: [
      process.execPath,
      packagePath('src/providers/real/common/api-forwarder.mjs'),
      up.socket,
      APISERVER_IP,
      '6443',
    ],
    enter: inFabric,
  });
  await forwarder.waitForLine(/^ready /, 10_000, run.signal);
  await Promise.race([
    up.input.api.ready(up.kubeconfig, up.socket, 60_000),
    apiserver.exited.then(async (code) => {
      throw new HarnessError('LAB_FAILED', `kube-apiserver exited (${code}); its log:\n${await apiserver.tail()}`);
    }),
  ]);
  up.mark('kube-apiserver ready');
  up.daemon({ name: 'kube-controller-manager', argv: controllerManagerArgv(argvInput), enter: inFabric });
  up.daemon({ name: 'kube-scheduler', argv: schedulerArgv(argvInput), enter: inFabric });
  return pki;
}

/** A node's runtime: cgroup root, files, mount namespace, containerd with the images. */
async function startNodeRuntime(up: LocalBringUp, n: LocalNode): Promise<void> {
  await prepareNodeFiles(up, n);
  await startMountHolder(up, n);
  await startContainerd(up, n);
  up.mark(`containerd on ${n.scenarioName} ready, images imported`);
}

/** A node joins the running control plane: kubelet, registered and Ready, then kube-proxy. */
async function joinNode(up: LocalBringUp, n: LocalNode): Promise<void> {
  const { api } = up.input;
  await up.startKubelet(n);
  await api.waitNodeRegistered(n.kubeName, 60_000);
  await api.setPodCIDR(n.kubeName, n.podCIDR);
  await api.nodeReady(n.kubeName, 90_000);
  up.mark(`node ${n.scenarioName} Ready`);
  // kubelet first, then kube-proxy, as on a real node (the order of their INPUT/OUTPUT jumps follows it)
  await up.startKubeProxy(n);
  await up.waitKubeProxySynced(n);
  up.mark(`kube-proxy on ${n.scenarioName} synced`);
}

/** The node's cgroup root, its directories, its components' configuration files and its CNI conflist. */
async function prepareNodeFiles(up: LocalBringUp, n: LocalNode): Promise<void> {
  const { build, names, topology, onDestroy } = up.input;
  const root = names.cgroupRoot(n.scenarioName);
  onDestroy(`cgroup root /${root} (every pod of ${n.kubeName})`, () => removeCgroupRoot(root));
  await makeCgroupRoot(root);
  for (const d of ['var-lib', 'var-log', 'net.d', 'containerd', 'kubelet', 'sysctl'])
    await mkdir(join(n.dir, d), { recursive: true });
  await writeNodeConfigs(n, {
    build,
    kubeconfig: up.kubeconfig,
    resolvConf: up.resolvConf,
    cgroupRoot: root,
    kubeProxy: bootKubeProxy(topology),
  });
  // the conflist before containerd starts: the node is network-ready at once (the scenario's podCIDR, honoured)
  await writeFile(
    join(n.dir, 'net.d', '10-netrepro-bridge.conflist'),
    localBridgeConflist(
      n.podCIDR,
      join(n.dir, 'var-lib', 'cni-ipam'),
      topology.cni === 'flannel' ? FLANNEL_MTU : undefined,
    ),
  );
}

/** The process holding the node's private mount namespace; from then on `n.mountNs()` names it. */
async function startMountHolder(up: LocalBringUp, n: LocalNode): Promise<void> {
  const holder = up.daemon({
    name: `mounts-${n.scenarioName}`,
    argv: [
      'unshare',
      '--mount',
      '--propagation',
      'private',
      '--',
      'sh',
      '-c',
      MOUNT_SCRIPT,
      'sh',
      n.dir,
      ...KUBELET_KERNEL_TUNABLES,
    ],
    enter: { net: `/run/netns/${n.netns}` },
    what: `mount namespace of ${n.kubeName}`,
  });
  await holder.waitForLine(/^mounts ready$/, 10_000, up.input.run.signal);
  const mountNs = `/proc/${holder.pid}/ns/mnt`;
  n.mountNs = () => mountNs;
}

/** The node's containerd, in its namespaces, with the pause and pod images imported. */
async function startContainerd(up: LocalBringUp, n: LocalNode): Promise<void> {
  const { build, run } = up.input;
  const containerd = up.daemon({
    name: `containerd-${n.scenarioName}`,
    argv: ['containerd', `--config=${join(n.dir, 'containerd.toml')}`],
    enter: { net: `/run/netns/${n.netns}`, mount: n.mountNs() },
    what: `containerd on ${n.kubeName}`,
  });
  n.daemons.set('containerd', containerd);
  await containerd.waitForLine(/containerd successfully booted/, 30_000, run.signal);
  for (const tar of [build.images.pauseTar, build.images.podTar]) {
    await runCommand(['ctr', '--address', join(n.dir, 'containerd.sock'), '-n', 'k8s.io', 'images', 'import', tar], {
      timeoutMs: 120_000,
      signal: run.signal,
    });
  }
}

/** Programs on the hosts outside the cluster: the native pod agent, as the netns lab runs it there. */
async function startHostPrograms(up: LocalBringUp): Promise<void> {
  const { topology, run } = up.input;
  const agent = topology.hosts.some((h) => (h.serve ?? []).length > 0) ? await helperBinary('pod-agent') : '';
  await settleAll(
    topology.hosts.flatMap((h, i) =>
      (h.serve ?? []).map(async (program, j) => {
        const d = up.daemon({
          name: `host-${h.name}-${j}`,
          argv: agentProgramArgv([agent], program, h.name, []),
          enter: { net: `/run/netns/${up.hosts[i]!.netns}` },
          what: `program ${j} on host ${h.name}`,
        });
        await d.waitForLine(/^ready /, 10_000, run.signal);
      }),
    ),
  );
}

/**
 * Run by the node's mount-namespace holder (`unshare --mount --propagation private`): $1 is the node's
 * directory, the other arguments kubelet's kernel tunables. Drops the copies of the host's /run/netns
 * mounts (they would keep other labs' namespaces alive), puts a private /run, /var/lib and /var/log in
 * place, and covers each tunable with a file holding its current value, so kubelet's writes land there.
 */
const MOUNT_SCRIPT = `set -e
d="$1"; shift
umount -l /run/netns 2>/dev/null || true
mount -t tmpfs -o mode=755 netrepro-run /run
mount --bind "$d/var-lib" /var/lib
mount --bind "$d/var-log" /var/log
# where kubelet's cAdvisor looks for containerd: found at once instead of after its connection timeout
mkdir -p /run/containerd && ln -s "$d/containerd.sock" /run/containerd/containerd.sock
for t in "$@"; do
  f="$d/sysctl/$(echo "$t" | tr / .)"
  cat "/proc/sys/$t" > "$f"
  mount --bind "$f" "/proc/sys/$t"
done
echo mounts ready
exec sleep infinity`;

/** The bridge shape real clusters get, read by containerd 1.4 (CNI 0.4.0), with host-local's state in the node's directory. */
export function localBridgeConflist(podCIDR: string, ipamDir: string, mtu?: number): string {
  return bridgeConflistText(podCIDR, { cniVersion: '0.4.0', ipamDir, mtu });
}
