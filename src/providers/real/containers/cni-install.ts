// flannel and cilium installs on a cluster we created (kind, minikube, k3s); pinned versions from real-options.
import type { CiliumSettings } from '../common/cilium-settings.ts';
import type { KubeCli } from '../common/kube-cli.ts';

export interface ApiServerAddress {
  host: string;
  port: number;
  /**
   * Give it to Cilium beside kube-proxy too: then the agent reaches the API server on a node whose kube-proxy
   * rules are gone (a reboot that starts Cilium before kube-proxy), not through the kubernetes Service.
   */
  besideKubeProxy?: boolean;
}

/** `helm install` argv for cilium; the API server address is needed without kube-proxy (and given where asked). */
export function ciliumHelmArgs(chartVersion: string, settings: CiliumSettings, apiServer?: ApiServerAddress): string[] {
  const values: Record<string, string> = {
    'ipam.mode': 'kubernetes',
    'image.pullPolicy': 'IfNotPresent',
    'operator.replicas': '1',
    kubeProxyReplacement: String(settings.kubeProxyReplacement),
    'bpf.masquerade': String(settings.bpfMasquerade),
    'socketLB.enabled': String(settings.socketLB),
    // as in the lab: each node routes the others' pod CIDRs over the node network, not through a tunnel (the
    // chart's default), so cross-node pod traffic passes the nodes' netfilter in both directions unencapsulated
    routingMode: 'native',
    autoDirectNodeRoutes: 'true',
    ipv4NativeRoutingCIDR: settings.nativeRoutingCIDR,
  };
  if (settings.endpointRoutes) values['endpointRoutes.enabled'] = 'true';
  if (settings.bpfMasquerade && !settings.kubeProxyReplacement) {
    // the agent refuses BPF masquerade without its BPF NodePort, which kube-proxy replacement would bring
    values['nodePort.enabled'] = 'true';
    // BPF masquerade turns BPF host routing on, which takes pod traffic past the host's netfilter; beside
    // kube-proxy the incidents need it through netfilter (kube-proxy's FORWARD rules), replies alone in BPF
    values['bpf.hostLegacyRouting'] = 'true';
  }
  if (apiServer && (settings.kubeProxyReplacement || apiServer.besideKubeProxy)) {
    values.k8sServiceHost = apiServer.host;
    values.k8sServicePort = String(apiServer.port);
  }
  const sets = Object.entries(values).flatMap(([k, v]) => ['--set', `${k}=${v}`]);
  return [
    'install',
    'cilium',
    'cilium',
    '--repo',
    'https://helm.cilium.io',
    '--version',
    chartVersion,
    '--namespace',
    'kube-system',
    ...sets,
    '--wait',
    '--timeout',
    '10m',
  ];
}

export async function installCilium(
  cli: KubeCli,
  chartVersion: string,
  settings: CiliumSettings,
  apiServer?: ApiServerAddress,
): Promise<void> {
  await cli.helm(ciliumHelmArgs(chartVersion, settings, apiServer), { timeoutMs: 12 * 60_000 });
  await cli.kubectl(['-n', 'kube-system', 'rollout', 'status', 'daemonset/cilium', '--timeout=300s'], {
    timeoutMs: 310_000,
  });
}

export async function installFlannel(cli: KubeCli, manifestUrl: string): Promise<void> {
  await cli.kubectl(['apply', '-f', manifestUrl], { timeoutMs: 120_000 });
  await cli.kubectl(['-n', 'kube-flannel', 'rollout', 'status', 'daemonset/kube-flannel-ds', '--timeout=300s'], {
    timeoutMs: 310_000,
  });
}

/** Nodes turn Ready only once a CNI config is in place: the end of every CNI install. */
export async function waitNodesReady(cli: KubeCli): Promise<void> {
  await cli.kubectl(['wait', '--for=condition=Ready', 'nodes', '--all', '--timeout=300s'], { timeoutMs: 310_000 });
}

/**
 * The cluster's own Deployments (kube-dns; Cilium's operator) rolled out before the scenario starts, every replica
 * available: each pod that turns ready changes its Service's endpoints, and kube-proxy then rewrites its chains,
 * which zeroes the packet counters a scenario's checks read across a phase. (`condition=Available` is not enough:
 * it holds with one of CoreDNS's two replicas ready.)
 */
export async function waitSystemDeployments(cli: KubeCli): Promise<void> {
  const listed = await cli.kubectl(['-n', 'kube-system', 'get', 'deployments', '-o', 'name'], { timeoutMs: 30_000 });
  for (const deployment of listed.stdout.split('\n').filter(Boolean))
    await cli.kubectl(['-n', 'kube-system', 'rollout', 'status', deployment, '--timeout=300s'], {
      timeoutMs: 310_000,
    });
}
