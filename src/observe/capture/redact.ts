// `capture --redact`: Kubernetes namespaces, Services and pods (and the owners pods are named after) renamed
// consistently across a bundle, so it can be shared without telling what runs where. Addresses, ports, chain names
// (kube-proxy's are hashes) and rules stay as they are: in the cluster objects every string value is rewritten
// name by name, in iptables-save and nft text only the comments (where kube-proxy writes `ns/svc:port`). The
// mapping goes back to the caller, never into the bundle. Names every cluster has (default, kube-system, the
// `kubernetes` Service...) tell nothing and stay, so a reader still recognises them.
import type { Bundle } from './bundle-manifest.ts';

export const KEPT_NAMES: ReadonlySet<string> = new Set([
  'default',
  'kube-system',
  'kube-public',
  'kube-node-lease',
  'kubernetes',
]);

/** The cluster's own namespaces: the objects in them (kube-dns, coredns-..., kube-proxy-...) keep their names. */
export const SYSTEM_NAMESPACES: ReadonlySet<string> = new Set(['kube-system', 'kube-public', 'kube-node-lease']);

export type NameKind = 'namespace' | 'service' | 'pod' | 'owner';
const PREFIX: Record<NameKind, string> = { namespace: 'ns', service: 'svc', pod: 'pod', owner: 'owner' };

/** Original name -> redacted name, with the kinds it was found as (a pod and its Service often share a name). */
export interface Redaction {
  names: Map<string, { kind: NameKind; to: string; kinds: Set<NameKind> }>;
}

interface KubeObject {
  metadata?: { name?: string; namespace?: string; generateName?: string; ownerReferences?: { name?: string }[] };
}

const itemsOf = (text: string | undefined): KubeObject[] => {
  if (text === undefined) return [];
  try {
    return ((JSON.parse(text) as { items?: KubeObject[] }).items ?? []).filter(Boolean);
  } catch {
    return [];
  }
};

/** kube-proxy's comment: `ns/svc:port` (also `ns/svc` and with text after it). */
const COMMENT_NAMES = /([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)(?=[:\s"]|$)/g;

/** The names to rename, from the cluster objects and from rule comments (a bundle read without a kubeconfig). */
export function redactionOf(bundle: Bundle): Redaction {
  const names: Redaction['names'] = new Map();
  const counters: Record<NameKind, number> = { namespace: 0, service: 0, pod: 0, owner: 0 };
  // a name already in the bundle cannot be a new name
  const taken = new Set<string>(
    [...bundle.files.values()].flatMap((t) => t.match(/\b(?:ns|svc|pod|owner)-\d+\b/g) ?? []),
  );
  const add = (name: string | undefined, kind: NameKind) => {
    if (!name || KEPT_NAMES.has(name)) return;
    const known = names.get(name);
    if (known) return void known.kinds.add(kind);
    let to: string;
    do to = `${PREFIX[kind]}-${++counters[kind]}`;
    while (taken.has(to));
    taken.add(to);
    names.set(name, { kind, to, kinds: new Set([kind]) });
  };
  const cluster = (file: string) =>
    itemsOf(bundle.files.get(`cluster/${file}.json`)).filter(
      (o) => !SYSTEM_NAMESPACES.has(o.metadata?.namespace ?? ''),
    );
  for (const o of [...cluster('pods'), ...cluster('services'), ...cluster('endpointslices')])
    add(o.metadata?.namespace, 'namespace');
  for (const o of cluster('services')) add(o.metadata?.name, 'service');
  for (const o of cluster('pods')) add(o.metadata?.name, 'pod');
  for (const o of cluster('pods')) {
    add(o.metadata?.generateName?.replace(/-$/, ''), 'owner');
    for (const r of o.metadata?.ownerReferences ?? []) add(r.name, 'owner');
  }
  for (const o of cluster('endpointslices')) add(o.metadata?.name, 'owner');
  for (const [path, text] of bundle.files)
    if (isRuleText(path))
      for (const comment of comments(text))
        for (const m of comment.matchAll(COMMENT_NAMES)) {
          add(m[1], 'namespace');
          add(m[3], 'service');
        }
  return { names };
}

const isRuleText = (path: string) => /\/(iptables-save|nft-ruleset)\.txt$/.test(path);
const isClusterObjects = (path: string) => path.startsWith('cluster/') && path.endsWith('.json');

/** `--comment "..."` / `--comment word` (iptables-save) and `comment "..."` (nft); not `-m comment`, the match's name. */
const COMMENT = /(--comment |(?<!-m )\bcomment )("(?:[^"\\]|\\.)*"|\S+)/g;
const comments = (text: string) => [...text.matchAll(COMMENT)].map((m) => m[2]!);

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Replaces every whole-name occurrence (not part of a longer name) of a mapped name. `afterHyphen`: also a name
 * that ends a hyphenated word, as label keys carry them (`netrepro.io/backs-web`).
 */
function renamer(redaction: Redaction, afterHyphen = false): (s: string) => string {
  if (redaction.names.size === 0) return (s) => s;
  const longestFirst = [...redaction.names.keys()].sort((a, b) => b.length - a.length);
  const before = afterHyphen ? '(?<![A-Za-z0-9_])' : '(?<![A-Za-z0-9_-])';
  const pattern = new RegExp(`${before}(${longestFirst.map(escapeRegExp).join('|')})(?![A-Za-z0-9_-])`, 'g');
  return (s) => s.replace(pattern, (name) => redaction.names.get(name)!.to);
}

/** Objects whose keys are labels: renamed as their values are. */
const LABEL_MAPS = new Set(['labels', 'selector', 'matchLabels', 'nodeSelector']);

/** The bundle with its names renamed (files and manifest copied; `redacted` set). */
export function redactBundle(bundle: Bundle, redaction: Redaction = redactionOf(bundle)): Bundle {
  const rename = renamer(redaction);
  const files = new Map<string, string>();
  for (const [path, text] of bundle.files) {
    if (isClusterObjects(path)) files.set(path, redactJson(text, rename, renamer(redaction, true)));
    else if (isRuleText(path))
      files.set(
        path,
        text.replace(COMMENT, (_, lead, body) => `${lead}${rename(body)}`),
      );
    else files.set(path, text);
  }
  return { manifest: { ...bundle.manifest, redacted: true }, files };
}

/** Every string value renamed; keys (field names, label keys) kept. Managed fields go: only bookkeeping, full of names. */
function redactJson(text: string, rename: (s: string) => string, renameKey: (s: string) => string): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return rename(text);
  }
  const walk = (v: unknown, labelMap = false): unknown => {
    if (typeof v === 'string') return rename(v);
    if (Array.isArray(v)) return v.map((x) => walk(x));
    if (v && typeof v === 'object')
      return Object.fromEntries(
        Object.entries(v)
          .filter(([k]) => k !== 'managedFields')
          .map(([k, x]) => [
            labelMap ? renameKey(k) : k,
            // `web-7d9f-`: the name before the hyphen the API server adds a suffix after
            k === 'generateName' && typeof x === 'string'
              ? `${rename(x.replace(/-$/, ''))}-`
              : walk(x, LABEL_MAPS.has(k)),
          ]),
      );
    return v;
  };
  return `${JSON.stringify(walk(value), null, 2)}\n`;
}

/** The mapping for the user, original -> redacted, by kind: written beside the bundle, never inside. */
export function redactionMapping(redaction: Redaction): Record<NameKind, Record<string, string>> {
  const out: Record<NameKind, Record<string, string>> = { namespace: {}, service: {}, pod: {}, owner: {} };
  for (const [name, { kinds, to }] of redaction.names) for (const kind of kinds) out[kind][name] = to;
  return out;
}
