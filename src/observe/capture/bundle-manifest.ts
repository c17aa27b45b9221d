// The manifest of a capture bundle, format "netrepro-capture/1" (docs/capture.md): what was read, from where, and
// what could not be read with the command and why. `netrepro import` reads bundles of this format; fields are only
// ever added to it, never renamed.

export const BUNDLE_FORMAT = 'netrepro-capture/1';

/** Something that could not be read: never silently missing. */
export interface Unreadable {
  /** The item: a file's key (`bpf-net`), a fact (`kernel`) or a cluster object list (`pods`). */
  what: string;
  command: readonly string[];
  why: string;
}

export type SourceKind = 'host' | 'lab' | 'local' | 'kubectl-debug';

export interface NodeEntry {
  /** The Kubernetes node name (the lab's node name for a lab). */
  name: string;
  hostname: string | null;
  kernel: string | null;
  iptables: { version: string; backend: 'nf_tables' | 'legacy' } | null;
  /** File key -> path inside the bundle. */
  files: Record<string, string>;
  unreadable: Unreadable[];
  conntrack: { captured: boolean; entries: number; truncatedAt: number | null };
  /** Added to the agreed format: how each module's state in modules.json was decided. */
  moduleEvidence: Record<string, string>;
}

export interface ClusterEntry {
  files: Record<string, string>;
  unreadable: Unreadable[];
}

export interface BundleManifest {
  format: typeof BUNDLE_FORMAT;
  netrepro: string;
  capturedAt: string;
  /** `run`: the kept run's id (lab, local), else null. */
  source: { kind: SourceKind; run: string | null; kubeconfig: string | null };
  kubernetes: { serverVersion: string } | null;
  redacted: boolean;
  cluster: ClusterEntry | null;
  nodes: NodeEntry[];
}

/** A bundle before it is written: its manifest and its files, by path inside the bundle. */
export interface Bundle {
  manifest: BundleManifest;
  files: Map<string, string>;
}

export const MANIFEST_FILE = 'manifest.json';
