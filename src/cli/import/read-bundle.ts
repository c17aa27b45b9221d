// Reads a capture bundle (format netrepro-capture/1: a directory, or the same as a .tar.gz) into what import
// needs: the manifest, the cluster objects and each node's files, parsed. Every problem names the file.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { HarnessError } from '../../model/errors.ts';

export const BUNDLE_FORMAT = 'netrepro-capture/1';

/** Something the capture could not read, as its manifest records it. */
export interface Unreadable {
  what: string;
  command?: string[];
  why: string;
}

/** A Kubernetes object as `kubectl get -o json` lists it: only what import reads is typed. */
// biome-ignore lint/suspicious/noExplicitAny: kubectl's JSON, read field by field
export type KubeObject = Record<string, any>;

export interface BundleNode {
  name: string;
  kernel?: string;
  iptables?: { version?: string; backend?: string };
  /** Each file the manifest lists, by its key (`iptables-save`, `ip-route`, ...): text, or parsed JSON. */
  text: Record<string, string>;
  json: Record<string, unknown>;
  unreadable: Unreadable[];
  conntrack?: { captured: boolean; entries?: number; truncatedAt?: number | null };
}

export interface Bundle {
  /** Where it was read from, as given. */
  path: string;
  /** manifest.json, checked field by field where read. */
  manifest: KubeObject;
  cluster: { nodes: KubeObject[]; pods: KubeObject[]; services: KubeObject[]; endpointslices: KubeObject[] } | null;
  clusterUnreadable: Unreadable[];
  nodes: BundleNode[];
}

const JSON_FILES = new Set([
  'ip-addr',
  'ip-link',
  'ip-route',
  'ip-rule',
  'ip-neigh',
  'sysctls',
  'modules',
  'bpf-net',
  'bpf-cgroup',
]);

const bad = (file: string, message: string, hint?: string) =>
  new HarnessError(
    'USAGE',
    `${file}: ${message}`,
    hint ?? `a bundle is what \`netrepro capture\` writes (format ${BUNDLE_FORMAT})`,
  );

/** The bundle at `path` (a directory or a .tar.gz), read and checked. */
export async function readBundle(path: string): Promise<Bundle> {
  const info = await stat(path).catch(() => undefined);
  if (!info) throw bad(path, 'no such file or directory');
  if (info.isDirectory()) return readBundleDirectory(path, path);
  const dir = await mkdtemp(join(tmpdir(), 'netrepro-import-'));
  try {
    await promisify(execFile)('tar', ['-xzf', path, '-C', dir]).catch((e: Error) => {
      throw bad(path, `not a readable .tar.gz (${e.message.split('\n')[0]})`);
    });
    // the archive holds BUNDLE/ or the bundle's files at its top
    const top = (await stat(join(dir, 'manifest.json')).catch(() => undefined)) ? dir : await onlyChild(dir, path);
    return await readBundleDirectory(top, path);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function onlyChild(dir: string, path: string): Promise<string> {
  const { readdir } = await import('node:fs/promises');
  const entries = await readdir(dir, { withFileTypes: true });
  const dirs = entries.filter((e) => e.isDirectory());
  if (dirs.length !== 1) throw bad(`${path}!manifest.json`, 'not found at the top of the archive or in its one folder');
  return join(dir, dirs[0]!.name);
}

async function readBundleDirectory(dir: string, shown: string): Promise<Bundle> {
  const where = (rel: string) => (shown === dir ? join(dir, rel) : `${shown}!${rel}`);
  const manifestFile = where('manifest.json');
  const manifestText = await readFile(join(dir, 'manifest.json'), 'utf8').catch(() => {
    throw bad(manifestFile, 'not found: every bundle has its manifest at the top');
  });
  const manifest = parseJson(manifestText, manifestFile);
  if (manifest === null || typeof manifest !== 'object') throw bad(manifestFile, 'not a JSON object');
  if (manifest.format !== BUNDLE_FORMAT)
    throw bad(
      `${manifestFile}: format`,
      `${JSON.stringify(manifest.format)} is not a format this netrepro reads`,
      `this netrepro imports ${BUNDLE_FORMAT}: capture again with a netrepro that writes it, or import with the netrepro that captured it (${manifest.netrepro ?? 'unknown version'})`,
    );
  if (!Array.isArray(manifest.nodes) || manifest.nodes.length === 0)
    throw bad(`${manifestFile}: nodes`, 'no captured node: a replay restores each node the bundle holds');
  const readText = async (rel: string, field: string) => {
    if (typeof rel !== 'string' || rel.includes('..') || rel.startsWith('/'))
      throw bad(`${manifestFile}: ${field}`, `${JSON.stringify(rel)} is not a path inside the bundle`);
    return readFile(join(dir, rel), 'utf8').catch((e: NodeJS.ErrnoException) => {
      throw bad(where(rel), `listed in the manifest (${field}) but unreadable (${e.code ?? e.message})`);
    });
  };
  let cluster: Bundle['cluster'] = null;
  if (manifest.cluster) {
    const files = manifest.cluster.files ?? {};
    const list = async (key: string) => {
      if (files[key] === undefined) return [];
      const file = where(files[key]);
      const value = parseJson(await readText(files[key], `cluster.files.${key}`), file);
      if (!Array.isArray(value?.items)) throw bad(file, 'not a v1 List (no items array)');
      return value.items as KubeObject[];
    };
    if (files.nodes === undefined || files.pods === undefined)
      throw bad(
        `${manifestFile}: cluster.files`,
        `no ${files.nodes === undefined ? 'nodes' : 'pods'} file: import derives the topology from the nodes and pods`,
      );
    cluster = {
      nodes: await list('nodes'),
      pods: await list('pods'),
      services: await list('services'),
      endpointslices: await list('endpointslices'),
    };
  }
  const nodes: BundleNode[] = [];
  for (const [i, n] of (manifest.nodes as KubeObject[]).entries()) {
    if (typeof n?.name !== 'string') throw bad(`${manifestFile}: nodes[${i}].name`, 'missing');
    const text: Record<string, string> = {};
    const json: Record<string, unknown> = {};
    for (const [key, rel] of Object.entries((n.files ?? {}) as Record<string, string>)) {
      const content = await readText(rel, `nodes[${i}].files.${key}`);
      if (JSON_FILES.has(key)) json[key] = parseJson(content, where(rel));
      else text[key] = content;
    }
    nodes.push({
      name: n.name,
      kernel: n.kernel,
      iptables: n.iptables,
      text,
      json,
      unreadable: Array.isArray(n.unreadable) ? n.unreadable : [],
      conntrack: n.conntrack,
    });
  }
  return {
    path: shown,
    manifest,
    cluster,
    clusterUnreadable: Array.isArray(manifest.cluster?.unreadable) ? manifest.cluster.unreadable : [],
    nodes,
  };
}

// biome-ignore lint/suspicious/noExplicitAny: parsed JSON, checked by its reader
function parseJson(text: string, file: string): any {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw bad(file, `not valid JSON (${(e as Error).message})`);
  }
}
