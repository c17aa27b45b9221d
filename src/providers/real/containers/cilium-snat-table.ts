// A real node's BPF SNAT table, read by the node's Cilium agent: `cilium-dbg bpf nat list` in the `cilium-agent`
// container of the node's cilium pod (kubectl exec). The agent pins the map as
// /sys/fs/bpf/tc/globals/cilium_snat_v4_external on the node (pkg/maps/nat/nat.go, pkg/bpf/bpffs_linux.go at
// v1.20.0-pre.0), and prints one entry a line in the format src/dataplane/cilium-nat-list.ts parses. Not bpftool
// on the node: kind's node image has none; the agent image has one (images/runtime/Dockerfile), but the agent's
// own print reads the map with the agent's types wherever it pinned it.
import type { ExecOptions, ExecResult, Spawned } from '../../../contract/command.ts';
import type { SnatTable, Target } from '../../../contract/provider.ts';
import { HarnessError } from '../../../model/errors.ts';
import { COMPONENT_DAEMONSETS } from './component-daemonsets.ts';
import type { KubeCli } from '../common/kube-cli.ts';
import { nodePods } from './node-pods.ts';

export const NAT_LIST = ['cilium-dbg', 'bpf', 'nat', 'list'];
const AGENT_CONTAINER = 'cilium-agent';

/** The Cilium agent on one node: its pod is looked up at each command (a restart or a reboot replaces it). */
export class CiliumAgentTarget implements Target {
  readonly ref: string;

  constructor(
    private readonly kubectl: KubeCli,
    private readonly k8sName: string,
    private readonly signal?: AbortSignal,
  ) {
    this.ref = `node/${k8sName}`;
  }

  async exec(argv: readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
    const ds = COMPONENT_DAEMONSETS.cilium;
    const pods = await nodePods(
      this.kubectl,
      { node: this.k8sName, namespace: ds.namespace, selector: ds.selector },
      this.signal,
    );
    const pod = pods.find((p) => p.ready) ?? pods[0];
    if (!pod) throw new HarnessError('LAB_FAILED', `no cilium pod on node ${this.k8sName} to read its BPF maps`);
    return this.kubectl.kubectl(['-n', ds.namespace, 'exec', pod.name, '-c', AGENT_CONTAINER, '--', ...argv], {
      ...(this.signal ? { signal: this.signal } : {}),
      ...options,
    });
  }

  spawn(_argv: readonly string[]): Spawned {
    throw new HarnessError('UNSUPPORTED', 'commands in the Cilium agent run to their end; none runs in the background');
  }
}

/** The node's SNAT table as its agent prints it: already one entry a line. */
export function ciliumSnatTable(kubectl: KubeCli, k8sName: string, signal?: AbortSignal): SnatTable {
  return {
    target: new CiliumAgentTarget(kubectl, k8sName, signal),
    argv: [...NAT_LIST],
    entries: (stdout) => stdout.split('\n').filter((l) => l.trim() !== ''),
  };
}
