// The packet watches of a phase's single probes, started ahead. tcpdump takes 10-25 ms to listen (its
// capture ring costs the kernel an RCU grace period), and probes run one at a time: so every watch of the
// phase starts when the phase begins (while its checks take their first readings), and each probe takes its
// own, keeps only what was captured from its own start on, and stops it (its stop waits for every line
// tcpdump counted).
import type { StartedCluster, Target } from '../../contract/provider.ts';
import { probeClient } from '../../model/probes/registry.ts';
import { probeAddresses, toLocalhost } from './probe-addresses.ts';
import type { ProbeSpec } from '../../model/scenario-schema.ts';
import { PacketWatch } from './packet-watch.ts';
import { watchFilter } from './watch-filters.ts';
import { awaitedLater } from '../../contract/awaited-later.ts';

/**
 * A node reaches pods over cni0/flannel.1 and the fabric over eth0, and any client its own localhost over lo:
 * watch every interface there; a pod or host sends everything else by its eth0.
 */
export const watchInterface = (spec: ProbeSpec) =>
  spec.from.startsWith('node/') || toLocalhost(spec) ? 'any' : 'eth0';

const key = (target: Target, iface: string, filter: readonly string[]) => `${target.ref} ${iface} ${filter.join(' ')}`;

export class AheadWatches {
  private readonly started = new Map<string, { key: string; watch: Promise<PacketWatch> }>();

  constructor(specs: readonly ProbeSpec[], cluster: StartedCluster) {
    for (const spec of specs) {
      if (spec.repeat !== undefined) continue; // a series shares one watch of its own (SeriesWatch)
      const from = probeClient(spec.from);
      const target = cluster.target(from);
      const iface = watchInterface(spec);
      const { client, endpoint } = probeAddresses(spec, cluster);
      const filter = watchFilter(spec, client, endpoint.ip);
      const watch = awaitedLater(PacketWatch.start(target, filter, iface)); // on failure its probe starts one of its own
      this.started.set(spec.id, { key: key(target, iface, filter), watch });
    }
  }

  /** The watch started for probe `id` if it watches the same thing; undefined: start one. */
  take(id: string, target: Target, iface: string, filter: readonly string[]): Promise<PacketWatch> | undefined {
    const ahead = this.started.get(id);
    this.started.delete(id);
    if (ahead?.key === key(target, iface, filter)) return ahead.watch;
    if (ahead)
      void ahead.watch.then(
        (w) => w.stop(),
        () => {},
      );
    return undefined;
  }

  /** Stops the watches no probe took (a phase that ended early). */
  async stop(): Promise<void> {
    const left = [...this.started.values()];
    this.started.clear();
    await Promise.all(
      left.map((a) =>
        a.watch.then(
          (w) => w.stop(),
          () => {},
        ),
      ),
    );
  }
}
