// The configuration files of a `local` cluster's node, in its directory: containerd's (its own root, state
// and socket there, the node's CNI chain), kubelet's and kube-proxy's.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubeProxyConfig } from '../../../model/lab-action.ts';
import type { LocalBuild } from './local-build.ts';

/** The node as its configuration files name it. */
export interface ConfiguredNode {
  /** Its directory, where containerd keeps everything and the files are written. */
  dir: string;
  /** Its address on the fabric, where kubelet listens. */
  ip: string;
  /** Its Kubernetes node name. */
  kubeName: string;
}

/** What a node's configuration files name besides the node itself. */
export interface NodeConfigInput {
  build: LocalBuild;
  /** The cluster's kubeconfig, kube-proxy's client connection. */
  kubeconfig: string;
  /** The (empty) resolv.conf kubelet hands pods. */
  resolvConf: string;
  /** The node's kubelet --cgroup-root, without its leading slash. */
  cgroupRoot: string;
  /** kube-proxy's configuration fields from the scenario. */
  kubeProxy: KubeProxyConfig;
}

export async function writeNodeConfigs(n: ConfiguredNode, c: NodeConfigInput): Promise<void> {
  await writeFile(join(n.dir, 'containerd.toml'), containerdToml(n.dir, c.build.images.pauseRef));
  await writeFile(join(n.dir, 'kubelet.yaml'), kubeletYaml(n, c));
  await writeKubeProxyConfig(n, c.kubeconfig, c.kubeProxy);
}

/** kube-proxy's configuration file, written again before a restart with another configuration. */
export function writeKubeProxyConfig(n: ConfiguredNode, kubeconfig: string, config: KubeProxyConfig): Promise<void> {
  return writeFile(join(n.dir, 'kube-proxy.yaml'), kubeProxyYaml(n, kubeconfig, config));
}

/** containerd 1.4's configuration: everything it keeps under the node's directory `d`. */
function containerdToml(d: string, pauseRef: string): string {
  return `version = 2
root = "${d}/containerd/root"
state = "${d}/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "${d}/containerd.sock"
[ttrpc]
  address = "${d}/containerd.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${pauseRef}"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "${d}/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${d}/net.d"
[plugins."io.containerd.internal.v1.opt"]
  path = "${d}/containerd/opt"
`;
}

function kubeletYaml(n: ConfiguredNode, c: NodeConfigInput): string {
  return `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: ${n.ip}
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
authentication:
  anonymous: { enabled: true }
  webhook: { enabled: false }
authorization: { mode: AlwaysAllow }
cgroupDriver: cgroupfs
cgroupRoot: /${c.cgroupRoot}
cgroupsPerQOS: true
failSwapOn: false
oomScoreAdj: 0
resolvConf: ${c.resolvConf}
clusterDomain: cluster.local
clusterDNS: ["10.96.0.10"]
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: { memory.available: "1Mi", nodefs.available: "0%", nodefs.inodesFree: "0%", imagefs.available: "0%" }
serializeImagePulls: false
staticPodPath: ""
protectKernelDefaults: false
makeIPTablesUtilChains: true
# the node turns Ready within 2 s of its runtime being ready (default 10 s)
nodeStatusUpdateFrequency: 2s
`;
}

function kubeProxyYaml(n: ConfiguredNode, kubeconfig: string, config: KubeProxyConfig): string {
  return `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: { kubeconfig: ${kubeconfig} }
hostnameOverride: ${n.kubeName}
clusterCIDR: "${config.clusterCIDR}"
mode: iptables
iptables: { masqueradeAll: ${config.masqueradeAll} }
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
# 0: kube-proxy leaves nf_conntrack_max and the module's hashsize alone (host-wide settings)
conntrack: { maxPerCore: 0, min: 0 }
`;
}
