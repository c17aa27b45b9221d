// What the probe trace reads of its lab, and the two things it adds to it: its monitors' processes and the
// undo of its drop-filter entries. The netns lab (netns-lab.ts) is one; the trace sees nothing else of it.
import type { CommandRunner, Spawned } from '../../../contract/command.ts';
import type { Target } from '../../../contract/provider.ts';
import type { TopologySpec } from '../../../model/scenario-schema.ts';
import type { LabNames } from '../../namespaces/lab-names.ts';
import type { ReadonlyLabInventory } from '../lab-inventory.ts';
import type { NetnsTarget } from '../../namespaces/netns-target.ts';

export interface TracedLab {
  readonly names: LabNames;
  readonly topology: TopologySpec;
  readonly nodeNames: readonly string[];
  /** Which nodes have socket-LB cgroups and bpffs holders (the trace's facts). */
  readonly inventory: ReadonlyLabInventory;
  /** The lab's command runner (the monitors' helpers, the drop filter's updates). */
  readonly commands: CommandRunner;
  node(name: string): NetnsTarget;
  /** A node, pod or host by its ref (`node/a`): where a drop happened, to read its state. */
  target(ref: string): Target;
  /** A monitor: killed at teardown with the lab's other processes. */
  track(process: Spawned): void;
  atTeardown(what: string, undo: () => Promise<unknown>): void;
}
