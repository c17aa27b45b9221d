// The cluster's part of a bundle: nodes, pods, Services and EndpointSlices as `kubectl get -o json` lists them,
// read through the API server (a kubeconfig) or given by a lab that has none (lab-cluster-objects.ts).
import type { ClusterEntry, Unreadable } from './bundle-manifest.ts';

export const CLUSTER_LISTS = {
  nodes: ['get', 'nodes', '-o', 'json'],
  pods: ['get', 'pods', '-A', '-o', 'json'],
  services: ['get', 'services', '-A', '-o', 'json'],
  endpointslices: ['get', 'endpointslices', '-A', '-o', 'json'],
} as const;

export type ClusterList = keyof typeof CLUSTER_LISTS;

export interface ClusterCapture {
  entry: ClusterEntry;
  files: Map<string, string>;
  serverVersion: string | null;
}

/** How kubectl runs (which binary, kubeconfig, namespace): `args` after those; argv is what ran, for the manifest. */
export type Kubectl = (
  args: readonly string[],
) => Promise<{ argv: readonly string[]; stdout: string; stderr: string; exitCode: number | undefined }>;

const fileOf = (list: ClusterList) => `cluster/${list}.json`;

/** Each list through kubectl; one that fails is unreadable with its command and error, the others still read. */
export async function readClusterObjects(kubectl: Kubectl): Promise<ClusterCapture> {
  const files = new Map<string, string>();
  const entry: ClusterEntry = { files: {}, unreadable: [] };
  for (const [list, args] of Object.entries(CLUSTER_LISTS) as [ClusterList, readonly string[]][]) {
    const r = await kubectl(args).catch((e: Error) => ({
      argv: args,
      stdout: '',
      stderr: e.message,
      exitCode: undefined,
    }));
    if (r.exitCode === 0) {
      files.set(fileOf(list), r.stdout);
      entry.files[list] = fileOf(list);
    } else entry.unreadable.push(unreadable(list, r));
  }
  const version = await kubectl(['version', '-o', 'json']).catch(() => undefined);
  let serverVersion: string | null = null;
  try {
    serverVersion =
      (JSON.parse(version?.stdout ?? '') as { serverVersion?: { gitVersion?: string } }).serverVersion?.gitVersion ??
      null;
  } catch {}
  return { entry, files, serverVersion };
}

function unreadable(
  what: string,
  r: { argv: readonly string[]; stderr: string; exitCode: number | undefined },
): Unreadable {
  return {
    what,
    command: r.argv,
    why: `exit ${r.exitCode ?? '?'}: ${r.stderr.trim().split('\n').slice(-2).join(' | ').slice(0, 400)}`,
  };
}

/** The lists a lab wrote for itself (cluster-objects.json of its state directory). */
export function givenClusterObjects(objects: Record<ClusterList, unknown>): ClusterCapture {
  const files = new Map<string, string>();
  const entry: ClusterEntry = { files: {}, unreadable: [] };
  for (const list of Object.keys(CLUSTER_LISTS) as ClusterList[]) {
    files.set(fileOf(list), `${JSON.stringify(objects[list], null, 2)}\n`);
    entry.files[list] = fileOf(list);
  }
  return { entry, files, serverVersion: null };
}
