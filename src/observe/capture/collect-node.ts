// One node's part of a bundle: its commands' outcomes turned into files (as printed, or as JSON for the sysctls
// and modules), its manifest entry, and every item that could not be read with the command and why.
import { BRIDGE_MARKER, type CgroupRoot, DERIVED_FILES, FILE_COMMANDS, nodeCommands } from './capture-commands.ts';
import type { NodeEntry, Unreadable } from './bundle-manifest.ts';
import type { CommandOutcome, NodeReader } from './node-reader.ts';

export interface NodeCaptureOptions {
  /** Keep the first N lines of `conntrack -L`; undefined: no conntrack table (`conntrack -S` is always read). */
  conntrackLines?: number;
  /**
   * How br_netfilter's state is decided. `module`: loaded when /proc/sys/net/bridge exists in the node's network
   * namespace. `lab-emulation`: nodes that are namespaces of this host (the netns lab, a `local` cluster) stand for
   * "not loaded" with bridge-nf-call-iptables=0 in the node's namespace (the `br-netfilter` step; the host's module
   * serves every namespace), so that value counts as not loaded: a replay of the bundle stands for the same node.
   */
  brNetfilter: 'module' | 'lab-emulation';
}

/** One node to capture: its name, how its commands run, and its own cgroup where it has one (cgroupTreeCommand). */
export interface NodeToCapture {
  name: string;
  reader: NodeReader;
  cgroupRoot?: CgroupRoot;
}

export interface NodeCapture {
  entry: NodeEntry;
  /** Path inside the bundle -> content. */
  files: Map<string, string>;
}

export async function captureNode(node: NodeToCapture, options: NodeCaptureOptions): Promise<NodeCapture> {
  const outcomes = await node.reader.read(nodeCommands(options.conntrackLines, node.cgroupRoot));
  return nodeCapture(node.name, outcomes, options);
}

/** The node's files and manifest entry from its commands' outcomes (pure). */
export function nodeCapture(
  name: string,
  outcomes: ReadonlyMap<string, CommandOutcome>,
  options: NodeCaptureOptions,
): NodeCapture {
  const dir = `nodes/${name}`;
  const files = new Map<string, string>();
  const unreadable: Unreadable[] = [];
  const entry: NodeEntry = {
    name,
    hostname: null,
    kernel: null,
    iptables: null,
    files: {},
    unreadable,
    conntrack: { captured: false, entries: 0, truncatedAt: null },
    moduleEvidence: {},
  };
  const add = (key: string, file: string, content: string) => {
    files.set(`${dir}/${file}`, content);
    entry.files[key] = `${dir}/${file}`;
  };
  /** The outcome's output when the command ran and succeeded; else recorded as unreadable. */
  const output = (key: string): string | undefined => {
    const o = outcomes.get(key);
    if (!o) return undefined;
    const why = failure(o);
    if (why === undefined) return o.stdout;
    unreadable.push({ what: key, command: o.argv, why });
    return undefined;
  };

  entry.kernel = output('kernel')?.trim() || null;
  entry.hostname = output('hostname')?.trim() || null;
  const iptablesVersion = output('iptables-version');
  entry.iptables = iptablesVersion ? parseIptablesVersion(iptablesVersion) : null;

  for (const { key, file } of FILE_COMMANDS) {
    if (key === 'nft-ruleset') continue;
    const text = output(key);
    if (text !== undefined) add(key, file, text);
  }
  nftRuleset(outcomes, output, add);

  const sysctlText = output('sysctls');
  const sysctls = sysctlText !== undefined ? parseSysctls(sysctlText) : undefined;
  if (sysctls) add('sysctls', DERIVED_FILES.sysctls, `${JSON.stringify(sysctls.values, null, 2)}\n`);

  const loadedModules = new Set((output('modules') ?? '').split('\n').filter(Boolean));
  const br = brNetfilter(sysctls, loadedModules, outcomes.has('modules'), options.brNetfilter);
  if (br) {
    add('modules', DERIVED_FILES.modules, `${JSON.stringify({ br_netfilter: br.loaded }, null, 2)}\n`);
    entry.moduleEvidence.br_netfilter = br.decidedBy;
  }

  if (options.conntrackLines !== undefined) {
    const table = conntrackTable(outcomes.get('conntrack'), options.conntrackLines);
    if ('why' in table)
      unreadable.push({ what: 'conntrack', command: outcomes.get('conntrack')?.argv ?? [], why: table.why });
    else {
      add('conntrack', DERIVED_FILES.conntrack, table.text);
      entry.conntrack = { captured: true, entries: table.entries, truncatedAt: table.truncatedAt };
    }
  }
  return { entry, files };
}

/** Why an outcome gives no file: not run, failed, or printed nothing where something is always printed. */
function failure(o: CommandOutcome): string | undefined {
  if (o.notRun) return o.notRun;
  if (o.exitCode !== 0) return `exit ${o.exitCode ?? 'by signal'}: ${tail(o.stderr) || tail(o.stdout) || 'no output'}`;
  return undefined;
}

const tail = (s: string) => s.trim().split('\n').slice(-3).join(' | ').slice(0, 400);

/** `iptables v1.8.9 (nf_tables)` -> version and backend; a version without a backend is legacy. */
export function parseIptablesVersion(line: string): NodeEntry['iptables'] {
  const m = /iptables\s+(v[\d.]+)(?:\s+\((\w+)\))?/.exec(line);
  if (!m) return null;
  return { version: m[1]!, backend: m[2] === 'nf_tables' ? 'nf_tables' : 'legacy' };
}

/** The tables iptables-save shows under iptables-nft: its own, in the ip family. */
const IPTABLES_NFT_TABLES = new Set(['filter', 'nat', 'mangle', 'raw', 'security']);

/** Tables of `nft list tables` that iptables-save does not show. */
export function tablesBeyondIptables(nftTables: string, backend: 'nf_tables' | 'legacy' | undefined): string[] {
  return nftTables
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('table '))
    .filter((l) => {
      const [, family, table] = l.split(/\s+/);
      return !(backend === 'nf_tables' && family === 'ip' && IPTABLES_NFT_TABLES.has(table ?? ''));
    });
}

/** nft-ruleset.txt only when nft holds tables iptables-save does not show (its failures are recorded either way). */
function nftRuleset(
  outcomes: ReadonlyMap<string, CommandOutcome>,
  output: (key: string) => string | undefined,
  add: (key: string, file: string, content: string) => void,
): void {
  const tables = output('nft-tables');
  const ruleset = output('nft-ruleset');
  if (tables === undefined || ruleset === undefined) return;
  const backend = parseIptablesVersion(outcomes.get('iptables-version')?.stdout ?? '')?.backend;
  if (tablesBeyondIptables(tables, backend).length > 0) add('nft-ruleset', 'nft-ruleset.txt', ruleset);
}

/** `net/ipv4/conf/eth0.100/rp_filter` -> `net.ipv4.conf.eth0/100.rp_filter`, as sysctl(8) names it. */
export function sysctlName(path: string): string {
  return path
    .split('/')
    .map((part) => part.replaceAll('.', '/'))
    .join('.');
}

export function parseSysctls(text: string): { values: Record<string, string>; bridgeDir: boolean | undefined } {
  const values: Record<string, string> = {};
  let bridgeDir: boolean | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith(BRIDGE_MARKER)) bridgeDir = line.slice(BRIDGE_MARKER.length) === 'present';
    else if (line.includes('=')) {
      const at = line.indexOf('=');
      values[sysctlName(line.slice(0, at))] = line.slice(at + 1);
    }
  }
  return { values, bridgeDir };
}

const BRIDGE_NF = 'net.bridge.bridge-nf-call-iptables';

/** br_netfilter loaded or not, and how that was decided; undefined when nothing tells. */
export function brNetfilter(
  sysctls: ReturnType<typeof parseSysctls> | undefined,
  loadedModules: ReadonlySet<string>,
  modulesRead: boolean,
  rule: NodeCaptureOptions['brNetfilter'],
): { loaded: boolean; decidedBy: string } | undefined {
  if (sysctls?.bridgeDir !== undefined) {
    const dir = sysctls.bridgeDir;
    if (rule === 'lab-emulation' && dir && sysctls.values[BRIDGE_NF] === '0')
      return {
        loaded: false,
        decidedBy: `emulated per node namespace (netns lab, local cluster): ${BRIDGE_NF}=0 in the node's namespace stands for br_netfilter not loaded (the host's module is loaded; /proc/sys/net/bridge exists)`,
      };
    return {
      loaded: dir,
      decidedBy: `/proc/sys/net/bridge ${dir ? 'exists' : 'does not exist'} in the node's network namespace`,
    };
  }
  if (modulesRead)
    return {
      loaded: loadedModules.has('br_netfilter'),
      decidedBy: `/sys/module/br_netfilter ${loadedModules.has('br_netfilter') ? 'exists' : 'does not exist'} (the sysctls could not be read)`,
    };
  return undefined;
}

/** The kept lines of `conntrack -L` (the command printed at most `lines + 1`), or why there are none. */
export function conntrackTable(
  o: CommandOutcome | undefined,
  lines: number,
): { text: string; entries: number; truncatedAt: number | null } | { why: string } {
  if (!o) return { why: 'not run' };
  const why = failure(o);
  if (why) return { why };
  const all = o.stdout.split('\n').filter((l) => l.length > 0);
  // `conntrack -L | head` exits 0 even when conntrack failed: its error is then all there is
  if (all.length === 0 && o.stderr.trim() && !/flow entries have been shown/.test(o.stderr))
    return { why: tail(o.stderr) };
  const kept = all.slice(0, lines);
  return {
    text: kept.map((l) => `${l}\n`).join(''),
    entries: kept.length,
    truncatedAt: all.length > lines ? lines : null,
  };
}
