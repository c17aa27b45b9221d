// What restoring a captured node state runs, computed without running anything: the iptables-restore input
// (counters zeroed, the lab's own trace rules left out), the routes and rules as `ip -batch` lines, and each
// conntrack entry as a `conntrack -I` argv (netrepro import writes the state: docs/import.md).
import type { CapturedStateSpec } from '../model/captured-state.ts';

/** The probe trace's own rules (its comment): a capture taken from a lab holds them; the lab adds its own. */
const LAB_TRACE = /--comment "?netrepro-trace"?/;

/** The tables the probe trace writes to: restored without flushing, so its rules stay first in their chains. */
const TRACED_TABLES = new Set(['raw', 'mangle']);

/**
 * The captured `iptables-save -c` as two iptables-restore inputs: `flushed` (every table but raw and mangle,
 * replaced whole) and `kept` (raw and mangle, restored with --noflush after the trace's rules). Counters are
 * zeroed: what the capture counted happened on the captured node, not here.
 */
export function iptablesRestoreInput(save: string): { flushed: string; kept: string } {
  const flushed: string[] = [];
  const kept: string[] = [];
  let into = flushed;
  for (const raw of save.split('\n')) {
    const line = raw.trimEnd();
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('*')) into = TRACED_TABLES.has(line.slice(1)) ? kept : flushed;
    if (LAB_TRACE.test(line)) continue;
    into.push(line.replace(/^\[\d+:\d+\] /, '[0:0] ').replace(/^(:\S+ \S+) \[\d+:\d+\]$/, '$1 [0:0]'));
  }
  const text = (lines: string[]) => (lines.length > 0 ? `${lines.join('\n')}\n` : '');
  return { flushed: text(flushed), kept: text(withoutIdleChains(kept)) };
}

/**
 * A built-in chain with policy ACCEPT and no rule is what no chain at all is; iptables-save lists every built-in
 * chain of a table, but restoring one makes an nf_tables base chain the node may never have had, which the
 * probe trace then reports as one more hook the packet passed.
 */
function withoutIdleChains(lines: string[]): string[] {
  const tables: string[][] = [];
  for (const l of lines) l.startsWith('*') ? tables.push([l]) : tables.at(-1)?.push(l);
  return tables.flatMap((table) => {
    const used = new Set(table.flatMap((l) => /^(?:\[\d+:\d+\] )?-A (\S+)/.exec(l)?.[1] ?? []));
    return table.filter((l) => {
      const chain = /^:(PREROUTING|INPUT|FORWARD|OUTPUT|POSTROUTING) ACCEPT /.exec(l)?.[1];
      return chain === undefined || used.has(chain);
    });
  });
}

/**
 * `ip -batch` lines: the lab's own routes (every non-kernel route of main) out, the captured routes and rules in,
 * then the captured neighbours of addresses nothing in the replay holds.
 */
export function routeBatch(state: CapturedStateSpec): string[] {
  return [
    'route flush table main proto boot',
    ...state.routes.map((r) => `route add ${r}`),
    ...state.rules.map((r) => `rule add ${r}`),
    ...state.neighbours.map((n) => `neigh replace ${n}`),
  ];
}

/** How a captured neighbour state is restored: confirmed or not, as the node last knew it; one without a MAC is not. */
const RESTORED_NUD: Record<string, string> = {
  PERMANENT: 'permanent',
  NOARP: 'noarp',
  REACHABLE: 'reachable',
  STALE: 'stale',
  DELAY: 'stale',
  PROBE: 'stale',
};

/** A captured neighbour (`ip -j neigh` entry) as `ip neigh replace` arguments, or undefined when it has no MAC to restore. */
export function neighbourEntry(n: {
  dst?: unknown;
  dev?: unknown;
  lladdr?: unknown;
  state?: unknown;
}): string | undefined {
  const states = Array.isArray(n.state) ? (n.state as unknown[]) : [];
  const nud = states.map((s) => RESTORED_NUD[String(s)]).find((s) => s !== undefined);
  if (typeof n.dst !== 'string' || typeof n.dev !== 'string' || typeof n.lladdr !== 'string' || !nud) return undefined;
  if (!/^\d+\.\d+\.\d+\.\d+$/.test(n.dst) || !/^[0-9a-f:]{17}$/.test(n.lladdr)) return undefined;
  return `${n.dst} lladdr ${n.lladdr} dev ${n.dev} nud ${nud}`;
}

/** Entries restored with a shorter remaining lifetime would expire while the lab starts its probes. */
export const MIN_CONNTRACK_TIMEOUT_S = 60;

/**
 * A `conntrack -L -o extended` line as the `conntrack -I` argv that recreates it: both tuples, the NAT the
 * reply tuple shows (--dst-nat where the reply comes from another address or port than the original went
 * to, --src-nat where it goes back to another), its state, status and mark; or why it cannot be.
 */
export function conntrackInsert(line: string): { argv: string[] } | { why: string } {
  const words = line.trim().split(/\s+/);
  // ipv4 2 udp 17 TIMEOUT [STATE] src=... (extended); without the family prefix: udp 17 TIMEOUT ...
  const at = words[0] === 'ipv4' || words[0] === 'ipv6' ? 2 : 0;
  if (words[0] === 'ipv6') return { why: 'an IPv6 entry (the lab is IPv4 only)' };
  const proto = words[at];
  if (proto !== 'tcp' && proto !== 'udp')
    return { why: `an entry of protocol ${proto ?? '(none)'}: only TCP and UDP entries are recreated` };
  const timeout = Number(words[at + 2]);
  if (!Number.isInteger(timeout)) return { why: 'no timeout where `conntrack -L -o extended` prints one' };
  const state = proto === 'tcp' && /^[A-Z_]+$/.test(words[at + 3] ?? '') ? words[at + 3] : undefined;
  const tuples: Record<string, string>[] = [];
  const flags = new Set<string>();
  let mark: string | undefined;
  let zone: string | undefined;
  for (const w of words.slice(at + 3)) {
    const flag = /^\[([A-Z_]+)\]$/.exec(w);
    if (flag) {
      flags.add(flag[1]!);
      continue;
    }
    const [key, value] = w.split('=', 2) as [string, string | undefined];
    if (value === undefined) continue;
    if (key === 'src' && (tuples.length === 0 || tuples.at(-1)!.src !== undefined)) tuples.push({});
    if (['src', 'dst', 'sport', 'dport'].includes(key) && tuples.length > 0) tuples.at(-1)![key] = value;
    if (key === 'mark') mark = value;
    if (key === 'zone') zone = value;
  }
  const [orig, reply] = tuples;
  if (
    !orig?.src ||
    !orig.dst ||
    !orig.sport ||
    !orig.dport ||
    !reply?.src ||
    !reply.dst ||
    !reply.sport ||
    !reply.dport
  )
    return { why: 'not both tuples with addresses and ports' };
  const dnat = reply.src !== orig.dst || reply.sport !== orig.dport;
  const snat = reply.dst !== orig.src || reply.dport !== orig.sport;
  // the kernel applies a NAT to the reply tuple it is given (nf_nat_setup_info): with one, the reply tuple is
  // the original's inverse, and the NAT makes it the captured one with the status bits that rewrite packets
  const r = dnat || snat ? { src: orig.dst, dst: orig.src, sport: orig.dport, dport: orig.sport } : reply;
  const argv = ['conntrack', '-I', '-p', proto, '-s', orig.src, '-d', orig.dst, '--sport', orig.sport];
  argv.push(
    '--dport',
    orig.dport,
    '-r',
    r.src!,
    '-q',
    r.dst!,
    '--reply-port-src',
    r.sport!,
    '--reply-port-dst',
    r.dport!,
  );
  argv.push('-t', String(Math.max(timeout, MIN_CONNTRACK_TIMEOUT_S)));
  if (state) argv.push('--state', state);
  const status = [...(flags.has('UNREPLIED') ? [] : ['SEEN_REPLY']), ...(flags.has('ASSURED') ? ['ASSURED'] : [])];
  if (status.length > 0) argv.push('-u', status.join(','));
  if (dnat) argv.push('--dst-nat', `${reply.src}:${reply.sport}`);
  if (snat) argv.push('--src-nat', `${reply.dst}:${reply.dport}`);
  if (mark !== undefined && mark !== '0') argv.push('-m', mark);
  if (zone !== undefined && zone !== '0') argv.push('-w', zone);
  return { argv };
}
