// A whole bundle: each node's part, the cluster's when there is one, and the manifest that says what was read from
// where and what could not be read.
import { VERSION } from '../../model/version.ts';
import { BUNDLE_FORMAT, type Bundle, type BundleManifest, MANIFEST_FILE } from './bundle-manifest.ts';
import type { ClusterCapture } from './cluster-objects.ts';
import { captureNode, type NodeCaptureOptions, type NodeToCapture } from './collect-node.ts';

export interface CaptureInput {
  source: BundleManifest['source'];
  nodes: readonly NodeToCapture[];
  /** The cluster objects, read while the nodes are; undefined when there is no cluster to read. */
  cluster?: () => Promise<ClusterCapture>;
  node: NodeCaptureOptions;
  now?: () => Date;
}

export async function captureBundle(input: CaptureInput): Promise<Bundle> {
  const capturedAt = (input.now ?? (() => new Date()))().toISOString();
  // the cluster first: a node read through a debug pod adds that pod to the cluster while it runs
  const cluster = await input.cluster?.();
  // nodes one after another: a node's reads are many short processes, and the machine is shared
  const nodes = [];
  for (const n of input.nodes) nodes.push(await captureNode(n, input.node));
  const files = new Map<string, string>();
  for (const [path, text] of cluster?.files ?? []) files.set(path, text);
  for (const n of nodes) for (const [path, text] of n.files) files.set(path, text);
  const manifest: BundleManifest = {
    format: BUNDLE_FORMAT,
    netrepro: VERSION,
    capturedAt,
    source: input.source,
    kubernetes: cluster?.serverVersion ? { serverVersion: cluster.serverVersion } : null,
    redacted: false,
    cluster: cluster ? cluster.entry : null,
    nodes: nodes.map((n) => n.entry),
  };
  return { manifest, files };
}

/** The bundle's files with manifest.json, as written. */
export function bundleFiles(bundle: Bundle): Map<string, string> {
  return new Map([[MANIFEST_FILE, `${JSON.stringify(bundle.manifest, null, 2)}\n`], ...bundle.files]);
}
