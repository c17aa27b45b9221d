// A kept trace is flushed without a packet: when its stop returns, every event the kernel reported before
// it is in the trace. Bursts of datagrams, each to a port of its own, to a closed port range of the node
// give the sources something to report per datagram (a rule verdict, a conntrack entry, a NO_SOCKET
// drop), and each trace is stopped the moment its burst is sent, while the monitors are still printing.
// The rule verdicts get a short burst: xtables-monitor --trace ends at the first overflow of its socket
// (ENOBUFS), and each datagram's verdicts through kube-proxy's chains take 38 KB of its 208 KB: four fit
// even while it reads nothing.
import { describe, expect, it } from 'vitest';
import { provisionNetnsLab } from '../../src/providers/netns/provision-netns-lab.ts';
import { newRunId, runPrefix } from '../../src/contract/run-id.ts';
import type { TraceEvent } from '../../src/model/trace-events.ts';
import { loadScenarioFile } from '../../src/model/load-scenario.ts';
import { packagePath } from '../../src/model/package-root.ts';
import { labSkipReason } from '../lab-support.ts';

describe.skipIf(labSkipReason)('a kept trace is flushed', () => {
  it('has every rule verdict, conntrack event and drop of a burst it was stopped right after', {
    timeout: 120_000,
  }, async () => {
    const { scenario } = await loadScenarioFile(packagePath('scenarios/service-no-endpoints-reject.yaml'));
    const runId = newRunId();
    const lab = await provisionNetnsLab(scenario.topology, {
      runId,
      prefix: runPrefix(runId),
      signal: new AbortController().signal,
      log: () => {},
    });
    try {
      const client = lab.address('pod/client');
      const node = lab.address('node/node-a');
      /** Sends `count` datagrams to the node's ports from `first` on and stops the trace at once: per kind of event, how many of those ports it has. */
      const burst = async (first: number, count: number) => {
        const trace = await lab.startTrace({ client, clientPod: 'client', target: { ip: node, port: first } });
        const datagrams = Array.from({ length: count }, (_, i) => `echo > /dev/udp/${node}/${first + i}`).join('\n');
        await lab.pod('client').exec(['bash', '-c', datagrams]);
        const { events, unavailable } = await trace.stop({ facts: true });
        expect(unavailable).toEqual([]);
        const ports = (wanted: (e: TraceEvent) => boolean) =>
          new Set(
            events
              .filter(
                (e) =>
                  e.packet.proto === 'udp' && e.packet.dport! >= first && e.packet.dport! < first + count && wanted(e),
              )
              .map((e) => e.packet.dport),
          ).size;
        return {
          rules: ports((e) => e.kind === 'rule'),
          conntrack: ports((e) => e.kind === 'conntrack' && e.event === 'NEW'),
          drops: ports((e) => e.kind === 'drop' && e.reason === 'NO_SOCKET'),
        };
      };
      expect(await burst(10_000, 4)).toEqual({ rules: 4, conntrack: 4, drops: 4 });
      expect(await burst(20_000, 200)).toMatchObject({ conntrack: 200, drops: 200 });
    } finally {
      await lab.destroy();
    }
  });
});
