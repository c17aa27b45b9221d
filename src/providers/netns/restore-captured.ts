// A captured node state (netrepro import) restored on a lab node in place of its boot: the lab built the node's
// network (addresses, CNI, veths; sysctls and br_netfilter as captured were set with the node's own), and this
// puts the captured tables, routes, rules and conntrack entries on it before the first probe (docs/import.md).
import type { CapturedStateSpec } from '../../model/captured-state.ts';
import { HarnessError } from '../../model/errors.ts';
import { conntrackInsert, iptablesRestoreInput, routeBatch } from '../../dataplane/captured-restore.ts';
import { ipBatch } from '../namespaces/namespace-batch.ts';
import type { NetnsLab } from './netns-lab.ts';

export async function restoreCaptured(lab: NetnsLab, nodeName: string, state: CapturedStateSpec): Promise<void> {
  const node = lab.node(nodeName);
  // a state directory is read in when the scenario loads (captured-files.ts): a topology parsed without its file has none
  if (state.iptables === undefined)
    throw new HarnessError(
      'LAB_FAILED',
      `node ${nodeName}: its captured state ${state.state} was not read in (load the scenario from its file)`,
    );
  const { flushed, kept } = iptablesRestoreInput(state.iptables);
  // -c: the zeroed counters are set as well; -w: the trace's own restore may hold the lock
  if (flushed) await node.exec(['iptables-restore', '-w', '-c'], { input: flushed });
  if (kept) await node.exec(['iptables-restore', '-w', '-c', '--noflush'], { input: kept });
  await ipBatch(lab.names.node(nodeName), routeBatch(state), lab.commands);
  for (const line of state.conntrack) {
    const insert = conntrackInsert(line);
    if ('why' in insert) continue; // netrepro import named it under notReplayed
    const result = await node.exec(insert.argv, { reject: false });
    if (result.exitCode !== 0)
      throw new HarnessError(
        'LAB_FAILED',
        `node ${nodeName}: the captured conntrack entry could not be recreated (${result.stderr.trim()}): ${line}`,
      );
  }
}
