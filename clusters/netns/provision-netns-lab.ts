// Builds a lab from a topology as an ordered list of actions. On any failure (or abort) the lab
// is destroyed before the error is re-thrown, so a failed start never leaves anything behind.
import { mkdir, writeFile } from 'node:fs/promises';
import { HarnessError } from '../../harness/model/errors.ts';
import type { TopologySpec } from '../../harness/model/scenario-schema.ts';
import { runCommand } from '../command.ts';
import { endpointSliceObject, serviceObject, type PodPlacement } from '../kube-objects.ts';
import type { RunContext } from '../provider.ts';
import { invokeCni } from './cni-plugin.ts';
import { kubeProxyRestore, KUBE_PROXY_PROFILES } from './kube-proxy-rules.ts';
import { labNames } from './lab-names.ts';
import { NetnsLab } from './netns-lab.ts';

/** The network joining the nodes, inside the fabric namespace only (kind's docker network uses the same). */
const FABRIC_NET = '172.18.0';
const READY_TIMEOUT_MS = 5000;


export async function provisionNetnsLab(topology: TopologySpec, run: RunContext): Promise<NetnsLab> {
  const names = labNames(run.runId);
  const lab = new NetnsLab(names, topology);
  const step = async (what: string, action: () => Promise<void>) => {
    if (run.signal.aborted) throw new HarnessError('ABORTED', `aborted before: ${what}`);
    const started = performance.now();
    await action();
    run.log(`${what} (${Math.round(performance.now() - started)} ms)`);
  };
  try {
    await step('state directory', async () => {
      await mkdir(`${names.stateDir}/ipam`, { recursive: true });
      await writeFile(`${names.stateDir}/owner.json`, JSON.stringify({ pid: process.pid, started: new Date().toISOString() }));
    });
    await step('fabric and nodes', () => createNodes(lab, topology));
    await step('pods via CNI bridge', () => Promise.all(topology.nodes.map((n) => createPods(lab, topology, n.name))).then(() => {}));
    await step('routes between nodes', () => routeBetweenNodes(lab, topology));
    await step(`kube-proxy ${topology.kubeProxy} rules`, () => writeKubeProxyRules(lab, topology));
    await step('pod programs', () => startPrograms(lab, topology, run));
    return lab;
  } catch (e) {
    await lab.destroy();
    throw e;
  }
}

async function createNodes(lab: NetnsLab, topology: TopologySpec): Promise<void> {
  const fabric = lab.names.fabric;
  await lab.createNamespace(fabric);
  await ipBatch(fabric, ['link add br0 type bridge', 'link set br0 up']);
  await Promise.all(
    topology.nodes.map(async (node, i) => {
      const ns = lab.names.node(node.name);
      const ip = `${FABRIC_NET}.${i + 2}`;
      await lab.createNamespace(ns);
      // created directly inside the namespaces: nothing ever appears in the root namespace
      await ipBatch(ns, [
        `link add eth0 type veth peer name n${i} netns ${fabric}`,
        `addr add ${ip}/24 dev eth0`,
        'link set eth0 up',
      ]);
      await ipBatch(fabric, [`link set n${i} master br0`, `link set n${i} up`]);
      lab.addresses.set(`node/${node.name}`, ip);
      const sysctls = { 'net.ipv4.ip_forward': 1, 'net.bridge.bridge-nf-call-iptables': 1, ...node.sysctls };
      await lab.node(node.name).exec(['sysctl', '-q', '-w', ...Object.entries(sysctls).map(([k, v]) => `${k}=${v}`)]);
    }),
  );
}

async function createPods(lab: NetnsLab, topology: TopologySpec, nodeName: string): Promise<void> {
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

export function podPlacements(lab: NetnsLab, topology: TopologySpec): Map<string, PodPlacement> {
  return new Map(topology.pods.map((p) => [p.name, { ip: lab.address(`pod/${p.name}`), node: p.node }]));
}

async function writeKubeProxyRules(lab: NetnsLab, topology: TopologySpec): Promise<void> {
  const profile = KUBE_PROXY_PROFILES[topology.kubeProxy]!;
  const placements = podPlacements(lab, topology);
  const services = topology.services.map(serviceObject);
  const slices = topology.services.map((s) => endpointSliceObject(s, placements));
  await Promise.all(
    topology.nodes.map(async (node) => {
      const target = lab.node(node.name);
      const liberal = await target.exec(['sysctl', '-n', 'net.netfilter.nf_conntrack_tcp_be_liberal']);
      const rules = kubeProxyRestore({ profile, services, slices, clusterCIDR: topology.clusterCIDR, beLiberal: liberal.stdout.trim() === '1' });
      await target.exec(['iptables-restore', '--noflush'], { input: rules });
    }),
  );
}

async function startPrograms(lab: NetnsLab, topology: TopologySpec, run: RunContext): Promise<void> {
  const records = topology.services.map((s) => `--record=${s.name}.${s.namespace}.svc.cluster.local=${s.clusterIP}`);
  const starts = topology.pods.flatMap((pod) =>
    (pod.serve ?? []).map(async (program) => {
      const argv = program.http
        ? [...lab.agentCommand, 'http', `--port=${program.http}`, `--name=${pod.name}`]
        : [...lab.agentCommand, 'dns', `--port=${program.dns}`, `--name=${pod.name}`, ...records];
      const process = lab.pod(pod.name).spawn(argv, { signal: run.signal });
      lab.processes.push(process);
      await process.waitFor(/^ready /, READY_TIMEOUT_MS);
    }),
  );
  await Promise.all(starts);
}

async function ipBatch(ns: string, commands: string[]): Promise<void> {
  await runCommand(['ip', '-n', ns, '-batch', '-'], { input: commands.join('\n') + '\n' });
}
