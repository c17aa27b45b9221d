// An `snat` check's number: the reply entries of one flow in a node's BPF SNAT table, one per connection. A
// reply entry (`TCP IN <server>:<port> -> <node>:<nat port> XLATE_DST <client>:<client port>`) is what the node's
// BPF reverse-SNATs the flow's replies by, past its conntrack; the original entry (`OUT`) pairs with it.
import { type NatEntry, parseNatEntry } from '../../dataplane/cilium-nat-list.ts';
import type { CheckSpec } from '../../model/scenario-schema.ts';

export type SnatFlowSpec = NonNullable<CheckSpec['snat']>;

/** The flow's reply entries among the table's lines, each by its tuple and translation (its age left out). */
export function flowEntries(
  lines: readonly string[],
  flow: SnatFlowSpec,
  address: (ref: string) => string,
): { key: string; line: string }[] {
  const server = address(flow.to);
  const client = address(flow.from);
  const protocol = flow.protocol.toUpperCase();
  const ofTheFlow = (e: NatEntry) =>
    e.direction === 'IN' &&
    e.protocol === protocol &&
    e.source === server &&
    e.sourcePort === flow.port &&
    e.xlate === client;
  return lines.flatMap((line) => {
    const e = parseNatEntry(line);
    if (!e || !ofTheFlow(e)) return [];
    return [{ key: `${e.destination}:${e.destinationPort} ${e.xlate}:${e.xlatePort}`, line: line.trim() }];
  });
}

/** `TCP IN <to>:<port> -> * XLATE_DST <from>:*`, for the reports. */
export function describeFlow(flow: SnatFlowSpec): string {
  return `${flow.protocol.toUpperCase()} IN ${flow.to}:${flow.port} -> * XLATE_DST ${flow.from}:*`;
}
