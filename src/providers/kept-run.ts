// A run kept with `netrepro run --keep`, found again by its id for `netrepro capture --run` and `netrepro clean
// --run`: a netns lab (its state in /run/netrepro/ID, its nodes the namespaces nr-ID-n-NODE) or a `local` cluster
// (its state in /var/tmp/netrepro-local/nr-ID-cluster, the same namespaces, an API server reached from the run's
// fabric namespace). Each node is reached by entering its network namespace, as nsenter --net does.
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Target } from '../contract/provider.ts';
import { runCommand, spawnCommand } from '../contract/command.ts';
import type { LabClusterObjects } from '../contract/lab-cluster-objects.ts';
import { HarnessError } from '../model/errors.ts';
import { labNames, NETNS_DIR } from './namespaces/lab-names.ts';
import { NetnsTarget } from './namespaces/netns-target.ts';
import { cleanLeftovers } from './netns/clean-leftovers.ts';
import { CGROUP_ROOT } from './netns/run-cgroups.ts';
import { cleanLocalLeftovers } from './real/local/clean-local-leftovers.ts';
import { findLocalBuild } from './real/local/local-build.ts';
import { localNames } from './real/local/local-names.ts';

export interface KeptNode {
  /** The scenario's node name (node-a). */
  name: string;
  /** The Kubernetes node name: the lab's node name, a `local` cluster's kubelet's (nr-ID-node-a). */
  kubeName: string;
  target: Target;
  /** The node's own cgroup (v2): a Cilium lab node's pods', a local node's kubelet root; false where it has none. */
  cgroup: string | false;
}

export interface KeptRun {
  kind: 'lab' | 'local';
  runId: string;
  nodes: KeptNode[];
  /** A lab's cluster objects as it wrote them, or why there are none. */
  labObjects?: () => Promise<LabClusterObjects>;
  /** A `local` cluster's kubectl: argv before the arguments, and the kubeconfig it uses. */
  kubectl?: { argv: readonly string[]; kubeconfig: string };
}

const RUN_ID = /^[0-9a-f]{6}$/;

export async function findKeptRun(runId: string): Promise<KeptRun> {
  if (!RUN_ID.test(runId))
    throw new HarnessError('USAGE', `--run ${runId}: a run id is 6 hex digits`, 'the id `netrepro run --keep` printed');
  const namespaces = (await readdir(NETNS_DIR).catch(() => [] as string[])).filter((n) =>
    n.startsWith(`nr-${runId}-n-`),
  );
  const nodeNames = namespaces.map((n) => n.slice(`nr-${runId}-n-`.length)).sort();
  const local = localNames(runId);
  if (existsSync(local.state)) {
    const kubectl = findLocalBuild()?.bin('kubectl') ?? 'kubectl';
    const kubeconfig = join(local.state, 'kubeconfig');
    return {
      kind: 'local',
      runId,
      nodes: nodeNames.map((name) =>
        keptNode(name, local.kubeNode(name), local.netnsPath(local.node(name)), [
          `/sys/fs/cgroup/unified/${local.cgroupRoot(name)}`,
          `/sys/fs/cgroup/${local.cgroupRoot(name)}`,
        ]),
      ),
      kubectl: {
        argv: [
          'nsenter',
          `--net=${local.netnsPath(local.fabric)}`,
          kubectl,
          '--kubeconfig',
          kubeconfig,
          '--context',
          `${local.prefix}cluster`,
        ],
        kubeconfig,
      },
    };
  }
  const lab = labNames(runId);
  if (existsSync(lab.stateDir) || nodeNames.length > 0)
    return {
      kind: 'lab',
      runId,
      nodes: nodeNames.map((name) =>
        keptNode(name, name, lab.netnsPath(lab.node(name)), [`${CGROUP_ROOT}/${runId}/${name}`]),
      ),
      labObjects: async () => JSON.parse(await readFile(lab.clusterObjects, 'utf8')) as LabClusterObjects,
    };
  throw new HarnessError(
    'USAGE',
    `no kept run ${runId} on this host (no ${lab.stateDir}, no ${local.state}, no namespace nr-${runId}-n-*)`,
    'keep one with `netrepro run ID --keep --stop-after faulted`; `ip netns` lists what runs are up',
  );
}

/** `cgroups`: where the node's own cgroup may be, the first that exists is it. */
function keptNode(name: string, kubeName: string, netnsPath: string, cgroups: string[]): KeptNode {
  const cgroup = cgroups.find((c) => existsSync(join(c, 'cgroup.procs')));
  return { name, kubeName, target: new NetnsTarget(`node/${name}`, netnsPath), cgroup: cgroup ?? false };
}

/** This host, as a Target: commands run as they are. */
export function thisHost(): Target {
  return {
    ref: 'node/this-host',
    exec: (argv, options) => runCommand(argv, options),
    spawn: (argv, options) => spawnCommand(argv, options),
  };
}

/** Removes one run's lab or cluster, alive or not (`netrepro clean --run ID`); what was removed, one line each. */
export async function removeKeptRun(runId: string): Promise<string[]> {
  if (!RUN_ID.test(runId))
    throw new HarnessError('USAGE', `--run ${runId}: a run id is 6 hex digits`, 'the id `netrepro run --keep` printed');
  // local first: its pods' processes are found by their cgroups, before the lab's removal takes the namespaces by name
  return [
    ...(await cleanLocalLeftovers({ force: true, run: runId })),
    ...(await cleanLeftovers({ force: true, run: runId })),
  ];
}
