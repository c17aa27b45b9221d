// The probe trace observes without touching: a scenario run with it leaves each node with the same ICMP
// and conntrack counters, the same conntrack entries and the same packets on lo and eth0 as the same run
// with NETREPRO_TRACE=0. The scenarios keep traces (so flush them): service-no-endpoints-reject's
// faulted probes are refused by a REJECT whose ICMP errors the node sends over lo (counters with
// something to count); stale-sock-lb-udp-dns's Cilium node runs without conntrack, which the trace's
// rules must not switch on; rp-filter-strict-asymmetric-route's drop makes the trace read the node's
// rp_filter values and its route back (sysctl, ip route get) at the drop.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { Spawned } from '../../src/contract/command.ts';
import { NetnsProvider } from '../../src/providers/netns/netns-provider.ts';
import type { ClusterProvider, StartedCluster } from '../../src/contract/provider.ts';
import { runScenario } from '../../src/engine/run/run-scenario.ts';
import type { ScenarioResult } from '../../src/engine/run/results.ts';
import { loadScenarioFile } from '../../src/model/load-scenario.ts';
import { packagePath } from '../../src/model/package-root.ts';
import { labSkipReason } from '../lab-support.ts';

/** What one node shows when its lab is torn down, as text that two runs of the same scenario share. */
interface NodeView {
  icmp: string[];
  conntrackStats: string[];
  conntrackEntries: string[];
  lo: string[];
  eth0: string[];
}

const CAPTURED = ['lo', 'eth0'] as const;
/**
 * Not the kernel's own multicast and IPv6 upkeep (IGMP and MLD reports, duplicate address detection): it
 * goes out on random timers after a link comes up, in one run before a capture starts, in the next after.
 */
const NOT_UPKEEP = 'not ip6 and not ip multicast';
/** An entry whose original destination (its first dst=) is a multicast group. */
const multicast = (entry: string) => Math.floor(Number(/ dst=(\d+)\./.exec(entry)?.[1]) / 16) === 14;

/** Client ports are the kernel's pick (ip_local_port_range, 32768 and up): the same flow gets another one each run. */
const anyEphemeralPort = (text: string) =>
  text.replace(/([.=])(\d{5})\b/g, (m, sep: string, port: string) => (Number(port) >= 32768 ? `${sep}*` : m));

/** /proc/net/snmp's Icmp and IcmpMsg rows (a line of names, then one of values), as `IcmpOutDestUnreachs=2`. */
function icmpCounters(snmp: string): string[] {
  const rows = snmp.split('\n').filter((l) => /^Icmp(Msg)?:/.test(l));
  const counters: string[] = [];
  for (let i = 0; i + 1 < rows.length; i += 2) {
    const [kind, ...names] = rows[i]!.split(/\s+/);
    const values = rows[i + 1]!.split(/\s+/).slice(1);
    for (const [j, name] of names.entries()) counters.push(`${kind!.slice(0, -1)}${name}=${values[j]}`);
  }
  return counters;
}

/** `conntrack -S`, summed over the CPUs: `found=3`, `insert=0`... */
function conntrackStats(stats: string): string[] {
  const sums = new Map<string, number>();
  for (const [, name, n] of stats.matchAll(/(\w+)=(\d+)/g))
    if (name !== 'cpu') sums.set(name!, (sums.get(name!) ?? 0) + Number(n));
  return [...sums].map(([name, n]) => `${name}=${n}`);
}

/**
 * `conntrack -L` without what ages (the timeout left, the use count) and multicast upkeep, sorted; the
 * initiator's ports (the original sport, the reply's dport: a masquerade may pick any) as `*`.
 */
function conntrackEntries(list: string): string[] {
  return list
    .split('\n')
    .filter((l) => /src=/.test(l) && !multicast(l))
    .map((l) => {
      // sport, dport, then the reply's sport, dport
      let n = 0;
      const ports = l.replace(/ (sport|dport)=\d+/g, (m, side: string) => ([0, 3].includes(n++) ? ` ${side}=*` : m));
      return ports
        .replace(/^(\S+\s+\d+)\s+\d+/, '$1')
        .replace(/ use=\d+/, '')
        .trim();
    })
    .sort();
}

/** A lab's interfaces get random MACs: an ARP reply between two nodes names another one each run. */
const anyMac = (text: string) => text.replace(/\b([0-9a-f]{2}:){5}[0-9a-f]{2}\b/g, '*');

/** tcpdump's packet lines, client ports and MACs as `*`, sorted (its own messages left out). */
function packets(capture: Spawned): string[] {
  return capture
    .lines()
    .filter((l) => /^(IP|IP6|ARP)\b/.test(l))
    .map((l) => anyMac(anyEphemeralPort(l)))
    .sort();
}

/** The netns provider, with captures on each node's lo and eth0 from when its lab is up, and each node's view read before teardown. */
function watchedProvider(views: Map<string, NodeView>[]): ClusterProvider {
  const netns = new NetnsProvider();
  return {
    name: netns.name,
    capabilities: netns.capabilities,
    fit: (topology) => netns.fit(topology),
    detect: () => netns.detect(),
    reap: (options) => netns.reap(options),
    async provision(topology, run) {
      const lab = await netns.provision(topology, run);
      const captures = lab.nodeNames.flatMap((node) =>
        CAPTURED.map((iface) => ({
          node,
          iface,
          capture: lab
            .node(node)
            .spawn(['tcpdump', '-i', iface, '-nn', '-q', '-t', '-l', '--immediate-mode', NOT_UPKEEP]),
        })),
      );
      try {
        await Promise.all(captures.map(({ capture }) => capture.waitFor(/^listening on/, 10_000)));
      } catch (e) {
        await Promise.all(captures.map(({ capture }) => capture.stop()));
        await lab.destroy();
        throw e;
      }
      const destroy = async () => {
        try {
          views.push(await readViews(lab, captures));
        } finally {
          await lab.destroy();
        }
      };
      return new Proxy(lab, {
        get: (target, key) => {
          if (key === 'destroy') return destroy;
          const value: unknown = Reflect.get(target, key, target);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    },
  };
}

async function readViews(
  lab: StartedCluster,
  captures: { node: string; iface: string; capture: Spawned }[],
): Promise<Map<string, NodeView>> {
  const views = new Map<string, NodeView>();
  for (const node of lab.nodeNames) {
    const exec = async (argv: string[]) => (await lab.node(node).exec(argv)).stdout;
    // /proc/PID/net is the namespace of PID: a capture's, in the node
    const inNode = captures.find((c) => c.node === node)!.capture.pid;
    views.set(node, {
      icmp: icmpCounters(await readFile(`/proc/${inNode}/net/snmp`, 'utf8')),
      conntrackStats: conntrackStats(await exec(['conntrack', '-S'])),
      conntrackEntries: conntrackEntries(await exec(['conntrack', '-L'])),
      lo: [],
      eth0: [],
    });
  }
  for (const { node, iface, capture } of captures) {
    await capture.stop();
    views.get(node)![iface as (typeof CAPTURED)[number]] = packets(capture);
  }
  return views;
}

async function run(id: string, trace: boolean): Promise<{ result: ScenarioResult; views: Map<string, NodeView> }> {
  const loaded = await loadScenarioFile(packagePath(`scenarios/${id}.yaml`));
  const views: Map<string, NodeView>[] = [];
  const before = process.env.NETREPRO_TRACE;
  if (trace) delete process.env.NETREPRO_TRACE;
  else process.env.NETREPRO_TRACE = '0';
  try {
    const result = await runScenario(loaded, {
      provider: watchedProvider(views),
      signal: new AbortController().signal,
      emit: () => {},
      faultOnly: true,
    });
    expect(views).toHaveLength(1);
    return { result, views: views[0]! };
  } finally {
    if (before === undefined) delete process.env.NETREPRO_TRACE;
    else process.env.NETREPRO_TRACE = before;
  }
}

const counter = (view: NodeView, name: string) =>
  Number(view.icmp.find((c) => c.startsWith(`${name}=`))?.split('=')[1]);

describe.skipIf(labSkipReason)('the probe trace observes without touching', () => {
  it.each(['service-no-endpoints-reject', 'stale-sock-lb-udp-dns', 'rp-filter-strict-asymmetric-route'])(
    '%s: nodes end a run with and without it with equal ICMP and conntrack counters, conntrack entries and lo/eth0 captures',
    { timeout: 180_000 },
    async (id) => {
      const traced = await run(id, true);
      const untraced = await run(id, false);
      for (const { result } of [traced, untraced]) expect(result.verdict, JSON.stringify(result.error)).toBe('passed');
      // the trace ran, whole, and kept the traces of the probes that did not end well (so flushed them)
      const kept = traced.result.phases.flatMap((p) => p.probes).filter((p) => p.trace);
      expect(kept.length).toBeGreaterThan(0);
      expect(kept.flatMap((p) => p.trace!.unavailable)).toEqual([]);
      const node = untraced.views.get('node-a')!;
      if (id === 'service-no-endpoints-reject') {
        expect(kept.every((p) => p.trace!.events.length > 0)).toBe(true);
        expect(counter(node, 'IcmpOutDestUnreachs')).toBeGreaterThan(0);
        expect(node.lo.length).toBeGreaterThan(0);
      } else if (id === 'stale-sock-lb-udp-dns') expect(traced.views.get('node-a')!.conntrackEntries).toEqual([]);
      else
        expect(kept.flatMap((p) => p.trace!.events)).toContainEqual(
          expect.objectContaining({
            kind: 'drop',
            reason: 'IP_RPFILTER',
            cause: expect.objectContaining({ kind: 'rp-filter' }),
          }),
        );
      expect(Object.fromEntries(traced.views)).toEqual(Object.fromEntries(untraced.views));
    },
  );
});
